// flow/src/analysis.hpp: the intra-procedural, flow-sensitive persistence analysis.
//
// Algorithm ([NVM] chapter 5, FlowNvm's pair, durability and double-flush checkers): a
// forward dataflow analysis over the function's CFG, iterated in reverse post-order to a
// fixpoint, then one more pass that reports. The abstract location is (object, cache line)
// (place.hpp); the state maps each location to a value in two lattices (the notes' section
// on FlowNvm lists them):
//   durability / pair   Write < Flush < Fence < Unknown   (Unknown: not written here)
//   double flush        Flush < Write < Unknown
// Transfer functions, per event (events.hpp): a store sets Write in both; a non-temporal
// store sets Flush (it needs only the fence); a write-back moves its lines Write -> Flush
// and, in the double-flush lattice, finds a line already at Flush (flushed, not written
// since: a double flush) before setting it to Flush; a fence moves Flush -> Fence.
// Checks: a store of a pointer into persistent memory publishes the object it points to,
// which must be at Fence everywhere (durability, "publish before durable"); a store to a
// sentinel field requires every other pending persistent store at Fence (pair), and so does
// a call whose summary stores a sentinel through an argument (checked after the callee's
// write-backs, before its fence; FERRITE_FLOW_SENTINEL_AT marks a word a sentinel in one
// function); after a store that arms a log word (FERRITE_FLOW_LOG, any value but zero),
// every persistent store to another line requires the log word's line at Fence (log: "log
// before modify", FlowNvm's log pattern with the tag as the log); at each return, every
// persistent store must be at Fence (durability, "the durability point").
//
// What differs from the paper: (1) the joins are chosen for bug finding, as the notes warn
// the extracted pseudocode's are not consistent: durability/pair take the lowest value of
// the predecessors (a store pending on any path is pending: the meet, "may"), double flush
// the highest (a line counts as flushed only if it is on every path: "must"), so neither
// reports a path-dependent case it cannot prove; (2) FlowNvm reports at the end of the
// root; ferrite-flow also reports at each publishing store, where the fix goes; (3)
// inter-procedural through context-insensitive summaries (summary.hpp); a call to a
// function without a body in the module (another file, a library) other than the
// primitives events.hpp knows is assumed to neither write, write back nor fence; (4) two
// path correlations: a hint flag's "set" edge counts as fenced when every non-zero store to
// the flag follows a fence (link-free's flush_insert), and a loop's exit edge applies its
// body's write-backs to the stores an earlier loop nest left at Write (a collect loop, then
// a write-back loop over what it collected: the zero-trip path of the second is feasible
// only when the first stored nothing); (5) FERRITE_FLOW_STORED_ELSEWHERE(p, n) puts the
// lines at p at Write, as a store would, in any function: a write-back-only function (a
// log's seal, link-free's flush_delete) declares the stores other calls left for it to make
// durable, which no one-function analysis sees (no publication, pair or log check there);
// (6) a flag correlation: the zero edge of a branch on a local flag or counter (a phi web of
// constants) takes the fixpoint over the CFG without the edges that set it (`if (wrote)
// pfence()`: the skip edge is taken only when no write-back ran); (7) a pointer field of
// every element of an array is one object (`w.word` in a range-for, `writes[i].word`
// later), and summaries reach one level deeper (arg.field.field2, a lambda's captured
// `this`) and list the function's stores, which a caller checks against a log it armed;
// (8) two more correlations (issue 22's eighth round): a function whose returns are
// constants or a branch's condition has a summary of its zero-returning paths
// (summary::on_zero), which a caller's branch on the call's result applies on its zero
// edge (`if (write_back_deferred(size)) pfence()`); and on the zero edge of a branch on a
// value against zero, the unsigned `k < value` tests on that value are false (a copy loop
// bounded by it never ran: `if (st.size > 0) pfence()`).
//
// Assumes: in an analysis root (FERRITE_FLOW_ROOT) every store through memory other than
// the function's stack and globals is persistent; elsewhere only fields marked
// FERRITE_FLOW_SENTINEL or FERRITE_FLOW_DURABLE are. A write-back of a line of an object
// also covers the object's stores at an unknown offset (fewer false reports, at the price
// of missing a wrong line behind a variable index); one at an unknown offset covers all
// of the object's lines. Behind a variable index into an array of line-multiple elements
// the location is the element's line (place::stride): a write-back of one element line
// does not cover another line of the same stride (a constant-offset write-back still does).
#pragma once

#include <map>
#include <vector>

#include "report.hpp"
#include "summary.hpp"

namespace llvm {
class Function;
}

namespace ferrite::flow {

using summaries = std::map<const llvm::Function*, summary>;

// Runs the analysis on one function (root: an analysis root) and appends its reports; a
// call to a function in `known` applies its summary.
void analyse_function(const llvm::Function& f, bool root, const summaries& known, std::vector<report>& out);

// The function's summary (summary.hpp), its callees' taken from `known`.
summary summarise_function(const llvm::Function& f, const summaries& known);

}  // namespace ferrite::flow
