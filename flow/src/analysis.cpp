// flow/src/analysis.cpp: see analysis.hpp.
#include "analysis.hpp"

#include <cstdint>
#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include "events.hpp"
#include "place.hpp"

namespace ferrite::flow {
namespace {

// One return's passthrough joined into those of the returns before it (`out`, empty before
// the first): the same argument and loaded field or no passthrough at all (false); a SKIP
// address only if every return is one; the offset kept only where every return agrees.
bool join_returns(std::optional<passthrough>& out, const passthrough& here) {
    if (!out) {
        out = here;
        return true;
    }
    if (out->arg != here.arg || out->load != here.load || out->load2 != here.load2) return false;
    out->skip = out->skip && here.skip;
    if (out->offset != here.offset) out->offset.reset();
    return true;
}

// Lattice values; a location absent from a map is Unknown (the top).
enum class dur : std::uint8_t { write, flush, fence };   // durability / pair
enum class dfl : std::uint8_t { flush, write };          // double flush

constexpr std::int64_t unknown_line = -1;
// Line l of every element of a line-multiple stride (`per` lines) behind a variable index
// (place::stride): keys below unknown_line, one range per stride.
constexpr std::int64_t elem_keys = 1024;
constexpr std::int64_t elem_key(std::int64_t per, std::int64_t l) { return -2 - (per * elem_keys + l); }
constexpr bool is_elem(std::int64_t key) { return key <= -2; }
constexpr std::int64_t elem_per(std::int64_t key) { return (-2 - key) / elem_keys; }
using location = std::pair<const llvm::Value*, std::int64_t>;  // (object, line)
using cfg_edge = std::pair<const llvm::BasicBlock*, const llvm::BasicBlock*>;

template <class V>
struct cell {
    V value;
    const llvm::Instruction* origin;  // the store (or write-back) that set it
    bool operator==(const cell&) const = default;
};

struct state {
    std::map<location, cell<dur>> d;
    std::map<location, cell<dfl>> f;
    bool fenced = false;  // a fence on every path so far (summaries)
    bool operator==(const state&) const = default;
};

std::int64_t floor_line(std::int64_t offset) {
    return offset >= 0 ? offset / line_bytes : -((-offset + line_bytes - 1) / line_bytes);
}

class analysis {
public:
    analysis(const llvm::Function& fn, bool root, const summaries& known, summary* collect)
        : fn_(fn),
          root_(root),
          known_(known),
          collect_(collect),
          tree_(const_cast<llvm::Function&>(fn)),
          loops_(tree_),
          layout_(fn.getParent()->getDataLayout()) {
        unsigned n = 0;
        for (const auto& bb : fn)
            for (const auto& inst : bb) order_[&inst] = n++;
        find_flags();
        find_call_zeros();
    }

    // A zero-return summary run (summarise_function): the fixpoint leaves out `cut`, the
    // edges after which the function can only return non-zero (zero_return_cut), and the
    // blocks they alone lead to (no predecessor reached: in_state's in_reached_).
    void cut_returns(std::set<cfg_edge> cut) { ret_cut_ = std::move(cut); }

    void run(std::vector<report>& out) {
        llvm::ReversePostOrderTraversal<const llvm::Function*> rpo(&fn_);
        std::map<const llvm::BasicBlock*, state> outs = fixpoint(rpo);
        if (find_hints(outs)) outs = fixpoint(rpo);  // again, with the hint edges fenced
        for (const llvm::BasicBlock* bb : rpo) {
            state s = in_state(bb, outs);
            if (!in_reached_) continue;
            for (const auto& inst : *bb) transfer(inst, s, &out);
        }
    }

    std::map<const llvm::BasicBlock*, state> fixpoint(llvm::ReversePostOrderTraversal<const llvm::Function*>& rpo) {
        if (cut_ == nullptr)
            for (flag_web& w : flags_) {  // each flag's zero paths first (find_flags)
                cut_ = &w.sets;
                w.outs = fixpoint(rpo);
                cut_ = nullptr;
            }
        std::map<const llvm::BasicBlock*, state> outs;
        bool changed = true;
        // Finite lattices and monotone transfers reach the fixpoint; the cap only guards
        // against a mistake turning into a hang.
        for (unsigned round = 0; changed && round < 1000; ++round) {
            changed = false;
            for (const llvm::BasicBlock* bb : rpo) {
                state s = in_state(bb, outs);
                if (!in_reached_) continue;  // only through left-out edges (a flag's, a zero return's)
                for (const auto& inst : *bb) transfer(inst, s, nullptr);
                auto it = outs.find(bb);
                if (it == outs.end() || !(it->second == s)) {
                    outs[bb] = std::move(s);
                    changed = true;
                }
            }
        }
        return outs;
    }

    // Flag correlation (issue 22's seventh round): a branch on a local flag or counter
    // against zero (`if (claimed == 0) return;`, `if (wrote) pfence();`). In SSA the flag is
    // a phi web: phis whose incoming values are zero, a non-zero constant, another phi of the
    // web, or the web plus (or bitwise or) a non-zero constant. An incoming edge that brings
    // a non-zero value "sets" the flag. When no edge that brings zero can follow a setting
    // edge, and the branch cannot follow a setting edge without passing the tested phi's
    // block again (the value tested is the one the setting edge fed), the flag is zero at
    // the branch exactly on the paths that took no setting edge: the zero edge's state is
    // the fixpoint over the CFG without the setting edges (flag_web::outs), not the meet over
    // every path (which keeps the write-back path's Flush on the edge that skips the fence).
    // A non-constant incoming value (a call's result, a load) voids the rule for the branch.
    void find_flags() {
        for (const auto& bb : fn_) {
            const auto* br = llvm::dyn_cast<llvm::BranchInst>(bb.getTerminator());
            if (br == nullptr || !br->isConditional()) continue;
            const llvm::Value* v = br->getCondition();
            unsigned zero_succ = 1;  // a bool tested directly: zero takes the false edge
            if (const auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(v)) {
                const auto* zero = llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(1));
                // x != 0, x == 0, or unsigned x > 0 (the same as x != 0)
                if ((!cmp->isEquality() && cmp->getPredicate() != llvm::CmpInst::ICMP_UGT) || zero == nullptr ||
                    !zero->isZero())
                    continue;
                v = cmp->getOperand(0);
                zero_succ = cmp->getPredicate() == llvm::CmpInst::ICMP_EQ ? 0 : 1;
            }
            v = strip_casts(v);
            const auto* tested = llvm::dyn_cast<llvm::PHINode>(v);
            if (tested == nullptr) {
                find_bound(bb, v, zero_succ);
                continue;
            }
            flag_web w;
            std::vector<cfg_edge> zeros;
            std::set<const llvm::PHINode*> seen{tested};
            std::vector<const llvm::PHINode*> work{tested};
            bool ok = true;
            while (ok && !work.empty()) {
                const llvm::PHINode* phi = work.back();
                work.pop_back();
                for (unsigned i = 0; ok && i < phi->getNumIncomingValues(); ++i) {
                    const cfg_edge e{phi->getIncomingBlock(i), phi->getParent()};
                    const llvm::Value* in = strip_casts(phi->getIncomingValue(i));
                    const llvm::PHINode* member = nullptr;
                    if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(in)) {
                        (c->isZero() ? zeros.push_back(e) : static_cast<void>(w.sets.insert(e)));
                    } else if ((member = llvm::dyn_cast<llvm::PHINode>(in)) != nullptr) {
                    } else if (const auto* op = llvm::dyn_cast<llvm::BinaryOperator>(in);
                               op != nullptr && (op->getOpcode() == llvm::Instruction::Add ||
                                                 op->getOpcode() == llvm::Instruction::Or)) {
                        const auto* k = llvm::dyn_cast<llvm::ConstantInt>(op->getOperand(1));
                        member = llvm::dyn_cast<llvm::PHINode>(strip_casts(op->getOperand(0)));
                        ok = k != nullptr && !k->isZero() && member != nullptr;
                        w.sets.insert(e);
                    } else {
                        ok = false;
                    }
                    if (ok && member != nullptr && seen.insert(member).second) work.push_back(member);
                }
            }
            if (!ok || w.sets.empty()) continue;
            for (const cfg_edge& set : w.sets) {
                for (const cfg_edge& z : zeros) ok = ok && !llvm::isPotentiallyReachable(set.second, z.first);
                ok = ok && !reaches_avoiding(set.second, &bb, tested->getParent());
            }
            if (!ok) continue;
            const cfg_edge zero_edge{&bb, br->getSuccessor(zero_succ)};
            if (zero_edge_of_.count(zero_edge) != 0) continue;
            zero_edge_of_[zero_edge] = flags_.size();
            flags_.push_back(std::move(w));
        }
    }

    // Return-value correlation (issue 22's eighth round): a branch on a call's result
    // against zero (`if (write_back_deferred(size)) pfence();`), the call in the branch's
    // own block, whose callee has a zero-return summary (summary::on_zero): on the zero edge
    // the call applies that summary instead of the meet over all its returns (in_state
    // re-runs the block's transfer with zero_call_ set).
    void find_call_zeros() {
        for (const auto& bb : fn_) {
            const auto* br = llvm::dyn_cast<llvm::BranchInst>(bb.getTerminator());
            if (br == nullptr || !br->isConditional()) continue;
            const llvm::Value* v = br->getCondition();
            unsigned zero_succ = 1;
            if (const auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(v)) {
                const auto* zero = llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(1));
                if (!cmp->isEquality() || zero == nullptr || !zero->isZero()) continue;
                v = cmp->getOperand(0);
                zero_succ = cmp->getPredicate() == llvm::CmpInst::ICMP_EQ ? 0 : 1;
            }
            const auto* call = llvm::dyn_cast<llvm::CallBase>(strip_casts(v));
            if (call == nullptr || call->getParent() != &bb || call->getCalledFunction() == nullptr) continue;
            const auto it = known_.find(call->getCalledFunction());
            if (it == known_.end() || !it->second.on_zero) continue;
            call_zero_edge_[{&bb, br->getSuccessor(zero_succ)}] = call;
        }
    }

    // Bound correlation (issue 22's eighth round): a branch on a value against zero
    // (`if (st.size > 0) pfence();` after `for (k = 0; k < st.size;) { store ... }`). On its
    // zero edge, every unsigned `x < bound` (or `bound > x`) test on that value is false, so
    // their true edges (a loop's way into its body) are cut from the zero edge's fixpoint.
    // The value must not be defined in a loop (one value on every path), and its tests are
    // those of the same SSA value only.
    void find_bound(const llvm::BasicBlock& bb, const llvm::Value* bound, unsigned zero_succ) {
        if (const auto* def = llvm::dyn_cast<llvm::Instruction>(bound); def != nullptr && loops_.getLoopFor(def->getParent()) != nullptr)
            return;
        if (!llvm::isa<llvm::Instruction>(bound) && !llvm::isa<llvm::Argument>(bound)) return;
        flag_web w;
        for (const auto& other : fn_) {
            const auto* br = llvm::dyn_cast<llvm::BranchInst>(other.getTerminator());
            if (br == nullptr || !br->isConditional() || br == bb.getTerminator()) continue;
            const auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(br->getCondition());
            if (cmp == nullptr) continue;
            const bool below = cmp->getPredicate() == llvm::CmpInst::ICMP_ULT && strip_casts(cmp->getOperand(1)) == bound;
            const bool above = cmp->getPredicate() == llvm::CmpInst::ICMP_UGT && strip_casts(cmp->getOperand(0)) == bound;
            if (below || above) w.sets.insert({&other, br->getSuccessor(0)});
        }
        if (w.sets.empty()) return;
        const cfg_edge zero_edge{&bb, bb.getTerminator()->getSuccessor(zero_succ)};
        if (zero_edge_of_.count(zero_edge) != 0) return;
        zero_edge_of_[zero_edge] = flags_.size();
        flags_.push_back(std::move(w));
    }

    static const llvm::Value* strip_casts(const llvm::Value* v) {
        while (const auto* cast = llvm::dyn_cast<llvm::CastInst>(v)) v = cast->getOperand(0);
        return v;
    }
    // Whether `to` is reachable from `from` on a path that does not enter `avoid` again (a
    // path that starts in `avoid` has passed it: false).
    static bool reaches_avoiding(const llvm::BasicBlock* from, const llvm::BasicBlock* to, const llvm::BasicBlock* avoid) {
        if (from == avoid) return false;
        if (from == to) return true;
        std::set<const llvm::BasicBlock*> seen{from};
        std::vector<const llvm::BasicBlock*> work{from};
        while (!work.empty()) {
            const llvm::BasicBlock* b = work.back();
            work.pop_back();
            for (const llvm::BasicBlock* next : llvm::successors(b)) {
                if (next == to) return true;
                if (next != avoid && seen.insert(next).second) work.push_back(next);
            }
        }
        return false;
    }

    // Hint flags (link-free's insert_flushed / delete_flushed): a branch on a
    // flag read against zero whose "set" edge skips the write-back and the fence. The edge
    // counts as fenced (state::fenced, so the summary fences on every path) when every
    // store of a non-zero value to the flag in this function comes after a fence on every
    // path (the first fixpoint's states say so) and no other value but zero is stored to
    // it: a set flag then means a thread fenced the state it stands for. The flag is the
    // (object, offset) read, or what a std::atomic_ref on the stack is bound to (bound_).
    // True if an edge was found (run() then iterates again).
    bool find_hints(const std::map<const llvm::BasicBlock*, state>& outs) {
        std::map<location, std::vector<std::pair<const llvm::BasicBlock*, const llvm::BasicBlock*>>> candidates;
        for (const auto& bb : fn_) {
            const auto* br = llvm::dyn_cast<llvm::BranchInst>(bb.getTerminator());
            if (br == nullptr || !br->isConditional()) continue;
            const llvm::Value* read = br->getCondition();
            unsigned set_edge = 0;  // the successor taken when the flag is non-zero
            if (const auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(read)) {
                if (!cmp->isEquality()) continue;
                const auto* zero = llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(1));
                if (zero == nullptr || !zero->isZero()) continue;
                read = cmp->getOperand(0);
                set_edge = cmp->getPredicate() == llvm::CmpInst::ICMP_NE ? 0 : 1;
            }
            while (const auto* cast = llvm::dyn_cast<llvm::CastInst>(read)) read = cast->getOperand(0);
            const auto flag = flag_read(*read);
            if (flag) candidates[*flag].push_back({&bb, br->getSuccessor(set_edge)});
        }
        if (candidates.empty()) return false;
        std::map<location, bool> valid;  // flag -> every set store fenced (and at least one)
        for (const auto& bb : fn_) {
            auto it = outs.find(&bb);
            if (it == outs.end()) continue;
            state s = in_state(&bb, outs);
            for (const auto& inst : bb) {
                if (const auto st = flag_store(inst); st && candidates.count(st->first) != 0) {
                    const auto* c = llvm::dyn_cast_or_null<llvm::ConstantInt>(st->second);
                    if (c == nullptr || !c->isZero()) {
                        auto [v, inserted] = valid.try_emplace(st->first, true);
                        v->second = v->second && c != nullptr && s.fenced;
                    }
                }
                transfer(inst, s, nullptr);
            }
        }
        for (const auto& [flag, edges] : candidates)
            if (auto v = valid.find(flag); v != valid.end() && v->second)
                for (const auto& e : edges) hints_.insert(e);
        return !hints_.empty();
    }

    // The flag a value reads: a load's (object, offset), or the field a stack atomic_ref
    // passed to its load() is bound to.
    std::optional<location> flag_read(const llvm::Value& read) {
        if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&read)) return flag_at(load->getPointerOperand());
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&read))
            if (method_named(*call, "::load(")) return flag_at(call->getArgOperand(0), true);
        return std::nullopt;
    }
    // A store's (flag, value stored): a store instruction, or an atomic_ref's store().
    std::optional<std::pair<location, const llvm::Value*>> flag_store(const llvm::Instruction& inst) {
        if (const auto* st = llvm::dyn_cast<llvm::StoreInst>(&inst))
            if (const auto at = flag_at(st->getPointerOperand())) return std::make_pair(*at, st->getValueOperand());
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
            if (method_named(*call, "::store(") && call->arg_size() >= 2)
                if (const auto at = flag_at(call->getArgOperand(0), true)) return std::make_pair(*at, call->getArgOperand(1));
        return std::nullopt;
    }
    static bool method_named(const llvm::CallBase& call, const char* name) {
        const llvm::Function* callee = call.getCalledFunction();
        return callee != nullptr && call.arg_size() >= 1 && llvm::demangle(callee->getName().str()).find(name) != std::string::npos;
    }
    std::optional<location> flag_at(const llvm::Value* address, bool wrapper = false) {
        place p = locate(address);
        if (wrapper) {  // the atomic_ref's own pointer: what it is bound to
            if (!p.stack || !p.offset) return std::nullopt;
            auto b = bound_.find({p.object, *p.offset});
            if (b == bound_.end()) return std::nullopt;
            p = b->second;
        }
        if (p.object == nullptr || !p.offset || p.stack) return std::nullopt;
        return location{p.object, *p.offset};
    }

    // A function that returns by value a one-pointer wrapper a constructor filled from its
    // arguments: (1) bound to a field of one (`std::atomic_ref(v2)`, returned by link-free's
    // a_v2()): a getter of that field (place.hpp's passthrough; skip when the field is
    // FERRITE_FLOW_SKIP, a_next()); (2) holding the pointer read from an argument's field (an
    // iterator of `v._M_start`: std::vector's begin()): a getter of that pointer field
    // (passthrough with load). (1) was for volatile fields only until flush_insert's fence,
    // skipped when its hint flag is set, counted as on every path (find_hints): make_valid()'s
    // v2 store, now seen, was reported at each call. After run().
    std::optional<passthrough> bound_return() const {
        if (!fn_.getReturnType()->isPointerTy()) return std::nullopt;
        std::optional<passthrough> out;
        for (const auto& bb : fn_) {
            const auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator());
            if (ret == nullptr || ret->getReturnValue() == nullptr) continue;
            const auto* load = llvm::dyn_cast<llvm::LoadInst>(ret->getReturnValue()->stripPointerCasts());
            if (load == nullptr) return std::nullopt;
            const place at = place_of(load->getPointerOperand(), layout_, through_);
            if (!at.stack || !at.offset) return std::nullopt;
            auto b = bound_.find({at.object, *at.offset});
            if (b == bound_.end()) return std::nullopt;
            passthrough here{0, b->second.offset, std::nullopt, b->second.skip, std::nullopt};
            if (const auto* a = llvm::dyn_cast<llvm::Argument>(b->second.object); a != nullptr) {
                here.arg = a->getArgNo();
            } else if (const auto held = path_of(b->second.object); held && held->field) {
                here.arg = held->arg;  // begin(): the iterator holds the vector's _M_start
                here.load = held->field;
            } else {
                return std::nullopt;
            }
            if (!join_returns(out, here)) return std::nullopt;
        }
        return out;
    }

private:
    // Join of the predecessors' out-states: the meet for durability (lowest value; equal
    // values keep the earlier origin), the must-join for double flush (analysis.hpp).
    state in_state(const llvm::BasicBlock* bb, const std::map<const llvm::BasicBlock*, state>& outs) {
        state in;
        bool first = true;
        for (const llvm::BasicBlock* pred : llvm::predecessors(bb)) {
            if (cut_ != nullptr && cut_->count({pred, bb}) != 0) continue;  // a flag's setting edge
            const std::map<const llvm::BasicBlock*, state>* from = &outs;
            if (cut_ == nullptr)
                if (auto z = zero_edge_of_.find({pred, bb}); z != zero_edge_of_.end())
                    from = &flags_[z->second].outs;  // the flag is zero: the paths that never set it
            if (ret_cut_.count({pred, bb}) != 0) continue;  // a zero-return run: only non-zero returns follow
            auto it = from->find(pred);
            if (it == from->end()) continue;  // not reached yet: the bottom of the join
            state edge;  // the out-state as this edge changes it
            const state* pp = &it->second;
            state zero;  // the call's result is zero on this edge (find_call_zeros)
            if (auto c = call_zero_edge_.find({pred, bb}); c != call_zero_edge_.end() && !recomputing_) {
                recomputing_ = true;
                zero_call_ = c->second;
                zero = in_state(pred, *from);
                for (const auto& inst : *pred) transfer(inst, zero, nullptr);
                zero_call_ = nullptr;
                recomputing_ = false;
                pp = &zero;
            }
            if (hints_.count({pred, bb}) != 0) {  // a set hint flag: as if fenced (find_hints)
                edge = *pp;
                edge.fenced = true;
                pp = &edge;
            }
            if (const llvm::Loop* loop = loops_.getLoopFor(pred); loop != nullptr && !loop->contains(bb)) {
                if (pp != &edge) edge = *pp;
                if (exit_write_backs(*loop, edge)) pp = &edge;
            }
            const state& p = *pp;
            if (first) {
                in = p;
                first = false;
                continue;
            }
            in.fenced = in.fenced && p.fenced;
            for (const auto& [loc, c] : p.d) {
                auto [at, inserted] = in.d.emplace(loc, c);
                if (!inserted && (c.value < at->second.value ||
                                  (c.value == at->second.value && earlier(c.origin, at->second.origin))))
                    at->second = c;
            }
            for (auto it2 = in.f.begin(); it2 != in.f.end();) {
                auto other = p.f.find(it2->first);
                if (other == p.f.end()) {
                    it2 = in.f.erase(it2);
                    continue;
                }
                if (other->second.value > it2->second.value ||
                    (other->second.value == it2->second.value && earlier(other->second.origin, it2->second.origin)))
                    it2->second = other->second;
                ++it2;
            }
        }
        in_reached_ = !first || bb == &fn_.getEntryBlock();
        return in;
    }

    // Loop correlation (issue 22's fifth round): on a loop's exit edge, the write-backs in
    // its body (guarded or not) also cover the stores still at Write that an earlier,
    // disjoint loop made (its outermost loop not around this one, whose header dominates
    // this one's: a collect loop nest, DFC's [t][s]): "write back each item an
    // earlier loop collected" (DFC's phase, the undo log). The path that leaves the
    // write-back loop without running its body is feasible only when the earlier loop had
    // nothing to store, which the meet cannot tell. Stores outside a loop, or in the
    // write-back loop itself, keep the ordinary meet. True if a cell changed.
    bool exit_write_backs(const llvm::Loop& loop, state& s) {
        bool changed = false;
        for (const llvm::BasicBlock* body : loop.blocks())
            for (const auto& inst : *body)
                for (const event& e : events_of(inst)) {
                    if (e.ptr == nullptr || (e.kind != event_kind::flush && e.kind != event_kind::persist)) continue;
                    const place p = locate(e.ptr);
                    if (p.stack || p.object == nullptr) continue;
                    state sub;  // the object's cells an earlier loop stored
                    for (auto c = s.d.lower_bound({p.object, INT64_MIN}); c != s.d.end() && c->first.first == p.object; ++c) {
                        if (c->second.value != dur::write) continue;
                        const llvm::Loop* from = loops_.getLoopFor(c->second.origin->getParent());
                        while (from != nullptr && from->getParentLoop() != nullptr &&
                               !from->getParentLoop()->contains(loop.getHeader()))
                            from = from->getParentLoop();  // the outermost loop of the store not around this one
                        if (from == nullptr || from->contains(loop.getHeader()) || loop.contains(from->getHeader()) ||
                            !tree_.dominates(from->getHeader(), loop.getHeader()))
                            continue;
                        sub.d.insert(*c);
                    }
                    if (sub.d.empty()) continue;
                    flush_place(p, e.len, false, inst, sub, nullptr, false);
                    for (const auto& [loc, c] : sub.d)
                        if (c.value != dur::write) {
                            s.d[loc] = c;
                            changed = true;
                        }
                }
        return changed;
    }

    // The accessors known so far (place.hpp's passthrough), from the callees' summaries.
    const passthrough* returned(const llvm::Function& f) const {
        auto it = known_.find(&f);
        return it != known_.end() && it->second.returns ? &*it->second.returns : nullptr;
    }
    passthrough_of through() const { return through_; }

    // A place, with the sentinels FERRITE_FLOW_SENTINEL_AT marked in this function.
    place locate(const llvm::Value* address) {
        place p = place_of(address, layout_, through(), canonical_);
        if (cursors_.count(p.object) != 0 && p.offset) {  // an iterator's element: the field in it
            p.field_in_element = p.offset;
            p.offset.reset();
        }
        if (!marked_.empty() && marked_.count({p.object, p.offset ? floor_line(*p.offset) : unknown_line}) != 0)
            p.sentinel = true;
        return p;
    }

    // The value that stands for every read of the same (object, constant offset): a load,
    // or a call to a field getter (place.hpp's canonical_of).
    const llvm::Value* canonical(const llvm::Value& read) {
        if (auto it = canonical_of_.find(&read); it != canonical_of_.end()) return it->second;
        std::optional<place> from;
        bool getter = false;
        if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&read)) {
            from = locate(load->getPointerOperand());
        } else if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&read)) {
            getter = true;
            const llvm::Function* callee = call->getCalledFunction();
            const passthrough* p = callee != nullptr ? returned(*callee) : nullptr;
            if (const auto key = external_getter_key(*call); p == nullptr && key) {
                getter = false;  // a pseudo-field: not an iterator on the stack
                from = locate(call->getArgOperand(0));
                if (from->offset) from->offset = *from->offset + *key;
            }
            if (p != nullptr && p->load && p->arg < call->arg_size()) {
                from = locate(call->getArgOperand(p->arg));
                if (from->offset) from->offset = *from->offset + *p->load;
                if (p->load2) {  // the field *load2 of what that pointer field points to
                    place held;
                    if (from->offset) {
                        if (!in_progress_.insert(&read).second) return &read;  // re-entered: not memoised
                        held = field_object(*from, 0);  // may locate other stores' addresses: in_progress_
                        in_progress_.erase(&read);
                    }
                    if (held.stack || held.object == nullptr || !held.offset) {
                        canonical_of_[&read] = &read;
                        return &read;
                    }
                    held.offset = *held.offset + *p->load2;
                    from = held;
                }
            }
        }
        const llvm::Value* out = &read;
        if (getter && from && from->stack && from->offset) {
            if (!in_progress_.insert(&read).second) return &read;  // re-entered: not memoised
            // A getter of a pointer field of the function's own stack: an iterator object a
            // range-for keeps (`*it` reads its _M_current) is the pointer stored or bound
            // there, somewhere in its object (the loop advances it: cursors_); a local
            // container none is stored into in this function (`epochs.begin()` of a local
            // std::vector) owns memory its constructor allocated: DRAM, as its stack.
            const place stored = field_object(*from, 0);  // may read other stack slots: in_progress_
            in_progress_.erase(&read);
            if (!stored.stack && stored.object != nullptr) {
                if (stored.skip) skipped_.insert(stored.object);
                cursors_.insert(stored.object);
                canonical_of_[&read] = stored.object;
                return stored.object;
            }
            // A local that a call returning by value (sret) or a copy filled (`const auto r =
            // dpfc_region::at(...)`: pool pointers) is not the container's own memory.
            if (!filled_by_copy(from->object)) {
                canonical_of_[&read] = from->object;
                return from->object;
            }
        }
        if (from && from->offset) {
            out = canonical_at_.emplace(location{from->object, *from->offset}, &read).first->second;
            field_of_.emplace(out, location{from->object, *from->offset});
        } else if (from && !getter && from->object != nullptr && !from->stack && from->field_in_element &&
                   read.getType()->isPointerTy()) {
            // A pointer field of every element of an array (issue 22's seventh round): the
            // word pointers of an undo log's write set, read as `w.word` in a range-for and as
            // `writes[i].word` in a later loop, are one object (somewhere in it), so loop
            // correlation can match the second loop's write-backs to the first's stores.
            // Elements told apart by index are taken for one (a missed report, as for a
            // variable index into one object).
            out = element_field_.emplace(location{from->object, *from->field_in_element}, &read).first->second;
        }
        // What a volatile container owns is volatile: an element reached through a getter
        // of a FERRITE_FLOW_SKIP field (a std::vector's operator[]). A pointer loaded from
        // such a field may point into the pool: not skipped.
        if (from && from->skip && getter) skipped_.insert(out);
        canonical_of_[&read] = out;
        return out;
    }

    // A stack slot that a call's sret result or a memcpy / memmove fills.
    static bool filled_by_copy(const llvm::Value* slot) {
        for (const llvm::User* u : slot->users()) {
            if (const auto* mt = llvm::dyn_cast<llvm::MemTransferInst>(u); mt != nullptr && mt->getRawDest() == slot)
                return true;
            if (const auto* call = llvm::dyn_cast<llvm::CallBase>(u))
                for (unsigned i = 0; i < call->arg_size(); ++i)
                    if (call->getArgOperand(i) == slot && call->paramHasAttr(i, llvm::Attribute::StructRet)) return true;
        }
        return false;
    }

    // The access path of an object seen from the function's caller (summary.hpp): an
    // argument (field nullopt), or the object a pointer field of an argument points to.
    struct path {
        unsigned arg;
        std::optional<std::int64_t> field;
    };
    std::optional<path> path_of(const llvm::Value* object) const {
        if (const auto* a = llvm::dyn_cast<llvm::Argument>(object)) return path{a->getArgNo(), std::nullopt};
        auto it = field_of_.find(object);
        if (it == field_of_.end()) return std::nullopt;
        const auto* a = llvm::dyn_cast<llvm::Argument>(it->second.first);
        if (a == nullptr) return std::nullopt;
        return path{a->getArgNo(), it->second.second};
    }
    // The same, one level deeper for write-backs and pending stores (issue 22's seventh
    // round): the object a pointer field of what an argument's pointer field points to
    // points to (`this` captured by a lambda: closure.this.image_, the epoch log's apply
    // through for_each_record's callback). `second` is that second field.
    std::optional<std::pair<path, std::optional<std::int64_t>>> path2_of(const llvm::Value* object) const {
        if (const auto at = path_of(object)) return std::make_pair(*at, std::optional<std::int64_t>());
        auto it = field_of_.find(object);
        if (it == field_of_.end()) return std::nullopt;
        const auto outer = path_of(it->second.first);
        if (!outer || !outer->field) return std::nullopt;
        return std::make_pair(*outer, std::optional<std::int64_t>(it->second.second));
    }

    // The object the pointer field at `at` (object, constant offset) points to, as the
    // caller of a summary with an access path sees it: its read of the field if it has one,
    // else one stand-in object that every later read of the field shares. A field of the
    // function's stack (a lambda's captures, an argument pack) is the pointer stored into it,
    // if one store does (else nothing: the place comes back on the stack, ignored).
    place field_object(const place& base, std::int64_t field) {
        place out;
        if (!base.offset) {
            out.stack = true;
            return out;
        }
        const location at{base.object, *base.offset + field};
        if (base.stack) {
            if (auto b = bound_.find(at); b != bound_.end()) {
                place p = b->second;
                p.skip |= base.skip;
                return p;
            }
            const llvm::Value* stored = nullptr;
            for (const auto& bb : fn_)
                for (const auto& inst : bb)
                    if (const auto* st = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
                        const place to = locate(st->getPointerOperand());
                        if (to.object != at.first || to.offset != at.second) continue;
                        if (stored != nullptr && stored != st->getValueOperand()) {
                            out.stack = true;
                            return out;
                        }
                        stored = st->getValueOperand();
                    }
            if (stored == nullptr || !stored->getType()->isPointerTy()) {
                out.stack = true;
                return out;
            }
            place p = locate(stored);
            p.sentinel = p.durable = false;
            p.skip |= base.skip;
            return p;
        }
        auto it = canonical_at_.find(at);
        if (it == canonical_at_.end()) {
            auto* ty = llvm::PointerType::getUnqual(fn_.getContext());
            standins_.emplace_back(new llvm::LoadInst(ty, llvm::PoisonValue::get(ty), "", false, llvm::Align(8),
                                                      static_cast<llvm::Instruction*>(nullptr)));
            it = canonical_at_.emplace(at, standins_.back().get()).first;
            field_of_.emplace(it->second, at);
        }
        out.object = it->second;
        out.offset = 0;
        // What a volatile object's fields point to is volatile (a FERRITE_FLOW_SKIP
        // std::vector's buffer), as for a getter of a skipped field (canonical()).
        out.skip = base.skip || skipped_.count(it->second) != 0;
        return out;
    }

    // Where a summary's (argument, field) lands in the caller, at `offset` from it.
    place target(const llvm::CallBase& call, unsigned arg, std::optional<std::int64_t> field,
                 std::optional<std::int64_t> offset, std::optional<std::int64_t> field2 = std::nullopt) {
        place base = locate(call.getArgOperand(arg));
        if (field) {
            base = field_object(base, *field);
            if (base.stack || base.object == nullptr) return base;
        }
        if (field && field2) {
            base = field_object(base, *field2);
            if (base.stack || base.object == nullptr) return base;
        }
        return shifted(base, offset);
    }

    bool earlier(const llvm::Instruction* a, const llvm::Instruction* b) const {
        return order_.at(a) < order_.at(b);
    }

    // A summary run tracks every store that is not to the stack or a global: the caller
    // decides, with its own places, which of them are persistent.
    bool persistent(const place& p) const {
        if (p.stack || p.global || p.skip || skipped_.count(p.object) != 0) return false;
        return root_ || collect_ != nullptr || p.sentinel || p.durable || p.log;
    }

    // The lines [first, last] an access covers, or nullopt: somewhere in the object.
    static std::optional<std::pair<std::int64_t, std::int64_t>> lines(const place& p, std::optional<std::uint64_t> len) {
        if (!p.offset || !len) return std::nullopt;
        if (*len == 0) return std::make_pair(std::int64_t{0}, std::int64_t{-1});
        const std::int64_t last = *p.offset + static_cast<std::int64_t>(*len) - 1;
        return std::make_pair(floor_line(*p.offset), floor_line(last));
    }

    // Behind a variable index (place::stride): the element's lines [first, last] an access
    // covers, as location keys (elem_key), or nullopt (somewhere in the object).
    static std::optional<std::pair<std::int64_t, std::int64_t>> element_lines(const place& p,
                                                                              std::optional<std::uint64_t> len) {
        if (p.offset || p.stride == 0 || !len || *len == 0) return std::nullopt;
        const std::int64_t per = p.stride / line_bytes;
        const std::int64_t first = floor_line(p.elem_lo);
        const std::int64_t last = floor_line(p.elem_hi + static_cast<std::int64_t>(*len) - 1);
        if (first < 0 || last >= per || per >= elem_keys) return std::nullopt;  // crosses elements
        return std::make_pair(elem_key(per, last), elem_key(per, first));      // keys descend with the line
    }

    // The first pending (not fenced) persistent store of an object, if any.
    const llvm::Instruction* pending(const state& s, const llvm::Value* object) const {
        const llvm::Instruction* first = nullptr;
        for (auto it = s.d.lower_bound({object, INT64_MIN}); it != s.d.end() && it->first.first == object; ++it)
            if (it->second.value != dur::fence && (first == nullptr || earlier(it->second.origin, first)))
                first = it->second.origin;
        return first;
    }

    void write(const event& e, const llvm::Instruction& inst, state& s, std::vector<report>* out) {
        const place p = locate(e.ptr);
        if (p.stack) return;
        const auto span = lines(p, e.len);
        const bool tracked = persistent(p);
        if (tracked && out != nullptr) {
            check_publish_and_pair(e, p, span, inst, s, *out);
            check_log(p, span, inst, s, *out);
        }
        if (tracked && (p.sentinel || p.durable || p.log)) annotated_.insert(&inst);
        if (tracked && p.log) {
            add_log(p, span, element_lines(p, e.len));
            // Storing zero disarms the log (the undo log's tag := none): what follows needs
            // no log, so no store is checked against this one.
            if (const auto* c = llvm::dyn_cast_or_null<llvm::Constant>(e.stored); c != nullptr && c->isNullValue())
                disarms_.insert(&inst);
        }
        // The callee's own stores, for its callers' log check (summary::stores): a log armed
        // there must be durable before them too (the vector's grow: the REPLACE tag fenced
        // before vector_install stores the new array's offset).
        if (tracked && !p.log && !p.sentinel && collect_ != nullptr && out != nullptr)
            if (const auto at = path2_of(p.object); at && collect_->stores.size() < 64)
                collect_->stores.push_back({at->first.arg, at->first.field,
                                            span && span->first == span->second ? std::optional(span->first) : std::nullopt,
                                            false, at->second});
        if (tracked && p.sentinel && collect_ != nullptr && out != nullptr)
            if (const auto at = path_of(p.object))
                add_sentinel({at->arg, at->field, span ? std::optional<std::int64_t>(span->first) : std::nullopt, s.fenced});
        if (collect_ != nullptr && out != nullptr && p.offset && e.stored != nullptr &&
            e.stored->getType()->isPointerTy())
            if (const auto* into = llvm::dyn_cast<llvm::Argument>(p.object)) bind_from(into->getArgNo(), *p.offset, locate(e.stored));
        const bool nt = e.kind == event_kind::nt_write;
        if (span) {
            for (std::int64_t l = span->first; l <= span->second; ++l) {
                if (tracked) s.d[{p.object, l}] = {nt ? dur::flush : dur::write, &inst};
                if (nt)
                    s.f.erase({p.object, l});
                else
                    s.f[{p.object, l}] = {dfl::write, &inst};
            }
            return;
        }
        if (const auto keys = element_lines(p, e.len); keys && tracked) {
            for (std::int64_t k = keys->first; k <= keys->second; ++k) s.d[{p.object, k}] = {nt ? dur::flush : dur::write, &inst};
        } else if (tracked) {
            s.d[{p.object, unknown_line}] = {nt ? dur::flush : dur::write, &inst};
        }
        // Somewhere in the object: every line of it may be dirty again.
        for (auto it = s.f.lower_bound({p.object, INT64_MIN}); it != s.f.end() && it->first.first == p.object; ++it)
            it->second = {dfl::write, &inst};
    }

    void check_publish_and_pair(const event& e, const place& p, const std::optional<std::pair<std::int64_t, std::int64_t>>& span,
                                const llvm::Instruction& inst, const state& s, std::vector<report>& out) {
        // A pointer, or a pointer stored as an integer (ptrtoint: an atomic CAS of a pointer).
        const llvm::Value* stored = e.stored;
        if (const auto* cast = llvm::dyn_cast_or_null<llvm::PtrToIntOperator>(stored)) stored = cast->getPointerOperand();
        if (stored != nullptr && stored->getType()->isPointerTy()) {
            const place target = locate(stored);
            if (!target.stack && !target.global && target.object != p.object)
                if (const auto* first = pending(s, target.object))
                    out.push_back({pattern::durability, &inst,
                                   "pointer published to persistent memory before the object it points to is "
                                   "durable: its store at " + line_col(first) +
                                       " is not written back and fenced first"});
        }
        if (p.sentinel) check_pair(p, span, inst, s, out);
    }

    // The lines a log word's stores (FERRITE_FLOW_LOG) armed in this function.
    void add_log(const place& p, const std::optional<std::pair<std::int64_t, std::int64_t>>& span,
                 const std::optional<std::pair<std::int64_t, std::int64_t>>& keys = std::nullopt) {
        if (!span && keys) {
            for (std::int64_t k = keys->first; k <= keys->second; ++k) logs_.insert({p.object, k});
            return;
        }
        if (!span) {
            logs_.insert({p.object, unknown_line});
            return;
        }
        for (std::int64_t l = span->first; l <= span->second; ++l) logs_.insert({p.object, l});
    }

    void add_sentinel(const summary::sentinel_store& st) {
        if (std::find(collect_->sentinels.begin(), collect_->sentinels.end(), st) == collect_->sentinels.end())
            collect_->sentinels.push_back(st);
    }

    // A persistent store (at `inst`) to another line than an armed log word's: the log word
    // must be written back and fenced first (log before modify).
    void check_log(const place& p, const std::optional<std::pair<std::int64_t, std::int64_t>>& span,
                   const llvm::Instruction& inst, const state& s, std::vector<report>& out) const {
        for (const location& loc : logs_) {
            const bool same_line = loc.first == p.object && span && loc.second >= span->first && loc.second <= span->second;
            if (same_line || (loc.first == p.object && loc.second < 0)) continue;  // unknown or element line
            auto it = s.d.find(loc);
            if (it == s.d.end() || it->second.value == dur::fence || disarms_.count(it->second.origin) != 0) continue;
            out.push_back({pattern::log, &inst,
                           "store to persistent memory before the log word (stored at " + line_col(it->second.origin) +
                               ") is written back and fenced: a crash could leave this change without its log"});
            return;
        }
    }

    // A store to a sentinel field (at `inst`, a store or a call that stores it): every other
    // pending persistent store must be written back and fenced first; with only_unwritten
    // (a callee that fences before its sentinel store), every other store written back.
    void check_pair(const place& p, const std::optional<std::pair<std::int64_t, std::int64_t>>& span,
                    const llvm::Instruction& inst, const state& s, std::vector<report>& out,
                    bool only_unwritten = false) const {
        const llvm::Instruction* first = nullptr;
        for (const auto& [loc, c] : s.d) {
            if (c.value == dur::fence || (only_unwritten && c.value == dur::flush)) continue;
            bool same_line = loc.first == p.object && span && loc.second >= span->first && loc.second <= span->second;
            if (!span && p.stride != 0 && loc.first == p.object && is_elem(loc.second))  // the element's line
                if (const auto keys = element_lines(p, 1))
                    same_line = loc.second >= keys->first && loc.second <= keys->second;
            if (same_line) continue;  // one line persists its stores in program order
            if (first == nullptr || earlier(c.origin, first)) first = c.origin;
        }
        if (first != nullptr)
            out.push_back({pattern::pair, &inst,
                           "sentinel written before its data is durable: the store at " + line_col(first) +
                               " is not written back and fenced before it"});
    }

    void flush(const event& e, const llvm::Instruction& inst, state& s, std::vector<report>* out) {
        flush_place(locate(e.ptr), e.len, e.kind == event_kind::sync_flush, inst, s, out, true);
    }

    // A write-back of len bytes at p; a callee's (double_flush false) is not checked as a
    // double flush, nor recorded as one.
    void flush_place(const place& p, std::optional<std::uint64_t> len, bool sync, const llvm::Instruction& inst,
                     state& s, std::vector<report>* out, bool double_flush) {
        if (collect_ != nullptr && out != nullptr)
            if (const auto at = path2_of(p.object))
                collect_->flushes.push_back({at->first.arg, at->first.field, p.offset, len, sync, at->second});
        const auto span = lines(p, len);
        // (plain integers: GCC 12 warns of a maybe-uninitialised optional in the loop)
        std::int64_t key_first = 0, key_last = 0, key_per = -1;
        if (!span)
            if (const auto keys = element_lines(p, len)) {
                key_first = keys->first;
                key_last = keys->second;
                key_per = elem_per(key_first);
            }
        auto d_begin = s.d.lower_bound({p.object, INT64_MIN});
        for (auto it = d_begin; it != s.d.end() && it->first.first == p.object; ++it) {
            const std::int64_t l = it->first.second;
            // An element's line is covered by a write-back of the same line of an element of
            // the same stride, and by any other (the index may be the same): only two lines
            // of one element are told apart.
            bool covered = !span || l == unknown_line || (l >= span->first && l <= span->second) || is_elem(l);
            if (is_elem(l) && elem_per(l) == key_per) covered = l >= key_first && l <= key_last;
            if (!covered) continue;
            if (sync)
                it->second.value = dur::fence;
            else if (it->second.value == dur::write)
                it->second.value = dur::flush;
        }
        if (!span || !double_flush) return;  // a range not known: neither a double flush nor a record of one
        for (std::int64_t l = span->first; l <= span->second; ++l) {
            auto [it, inserted] = s.f.try_emplace({p.object, l}, cell<dfl>{dfl::flush, &inst});
            if (inserted) continue;
            if (it->second.value == dfl::flush && out != nullptr)
                out->push_back({pattern::double_flush, &inst,
                                "cache line written back again with no store to it since its write-back at " +
                                    line_col(it->second.origin)});
            it->second = {dfl::flush, &inst};
        }
    }

    // FERRITE_FLOW_STORED_ELSEWHERE(p, n): stores another call made to the n bytes at p, now
    // this function's to make durable (a write-back-only function). They are put at Write, as
    // a store here would be, in every function (not only roots: the declaration says they are
    // persistent), with the declaration as their origin; no publication, pair or log check
    // (no value is stored here), and the double-flush lattice sees the lines dirty.
    void stored_elsewhere(const llvm::CallBase& call, state& s) {
        const place p = locate(call.getArgOperand(0));
        if (p.stack || p.object == nullptr) return;
        std::optional<std::uint64_t> len;
        if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(1))) len = c->getZExtValue();
        elsewhere_.insert(&call);
        if (const auto span = lines(p, len)) {
            for (std::int64_t l = span->first; l <= span->second; ++l) {
                s.d[{p.object, l}] = {dur::write, &call};
                s.f[{p.object, l}] = {dfl::write, &call};
            }
            return;
        }
        if (const auto keys = element_lines(p, len))
            for (std::int64_t k = keys->first; k <= keys->second; ++k) s.d[{p.object, k}] = {dur::write, &call};
        else
            s.d[{p.object, unknown_line}] = {dur::write, &call};
        for (auto it = s.f.lower_bound({p.object, INT64_MIN}); it != s.f.end() && it->first.first == p.object; ++it)
            it->second = {dfl::write, &call};
    }

    static void fence(state& s) {
        for (auto& [loc, c] : s.d)
            if (c.value == dur::flush) c.value = dur::fence;
        s.fenced = true;
    }

    static place shifted(place p, std::optional<std::int64_t> by) {
        p.offset = p.offset && by ? std::optional<std::int64_t>(*p.offset + *by) : std::nullopt;
        if (by) {  // within the element, if one (element_lines checks that it stays inside)
            p.elem_lo += *by;
            p.elem_hi += *by;
        } else {
            p.stride = 0;
        }
        return p;
    }

    // A call to a summarised function (summary.hpp): its write-backs, its fence, its stores
    // still pending at its return.
    // Records that argument `into`'s field at `field` now holds `from`: an argument plus an
    // offset, or the pointer read from an argument's field (summary::bind::load).
    void bind_from(unsigned into, std::int64_t field, const place& from) {
        if (const auto* a = llvm::dyn_cast<llvm::Argument>(from.object)) {
            add_bind({into, field, a->getArgNo(), from.offset, std::nullopt});
            return;
        }
        if (const auto at = path_of(from.object); at && at->field) add_bind({into, field, at->arg, from.offset, at->field});
    }

    void add_bind(const summary::bind& b) {
        if (std::find(collect_->binds.begin(), collect_->binds.end(), b) == collect_->binds.end())
            collect_->binds.push_back(b);
    }

    void apply(const llvm::CallBase& call, const summary& full, state& s, std::vector<report>* out) {
        const summary& callee = &call == zero_call_ && full.on_zero ? *full.on_zero : full;
        for (const auto& b : callee.binds) {
            if (b.into >= call.arg_size() || b.from >= call.arg_size()) continue;
            const place into = locate(call.getArgOperand(b.into));
            if (!into.offset) continue;
            place from = locate(call.getArgOperand(b.from));
            if (b.load) {
                from = field_object(from, *b.load);
                if (from.stack || from.object == nullptr) continue;
            }
            from = shifted(from, b.offset);
            bound_[{into.object, *into.offset + b.field}] = from;
            if (collect_ != nullptr && out != nullptr)
                if (const auto* a = llvm::dyn_cast<llvm::Argument>(into.object))
                    bind_from(a->getArgNo(), *into.offset + b.field, from);
        }
        for (const auto& r : callee.flushes) {
            if (r.arg >= call.arg_size()) continue;
            const place p = target(call, r.arg, r.field, r.offset, r.field2);
            if (!p.stack && p.object != nullptr) flush_place(p, r.len, r.sync, call, s, out, false);
        }
        // The callee's sentinel stores, checked against this function's pending stores after the
        // callee's write-backs, before its fence (its fence before the store: fenced_before)
        // (the callee's own stores before them are its own business: missed, not false).
        for (const auto& st : callee.sentinels) {
            if (st.arg >= call.arg_size()) continue;
            place p = target(call, st.arg, st.field, st.line ? std::optional<std::int64_t>(*st.line * line_bytes) : std::nullopt);
            if (p.stack || p.object == nullptr || p.skip) continue;
            const std::int64_t l = p.offset ? floor_line(*p.offset) : unknown_line;
            const auto span = p.offset ? std::optional(std::make_pair(l, l)) : std::nullopt;
            if (out != nullptr) check_pair(p, span, call, s, *out, st.fenced_before);
            if (collect_ != nullptr && out != nullptr)
                if (const auto at = path_of(p.object))
                    add_sentinel({at->arg, at->field, p.offset ? std::optional(l) : std::nullopt, s.fenced || st.fenced_before});
        }
        // The callee's stores, checked against a log armed here and not yet durable (only the
        // log check: its own write-backs and fences are the callee's business).
        if (out != nullptr && !logs_.empty())
            for (const auto& st : callee.stores) {
                if (st.arg >= call.arg_size()) continue;
                const place p = target(call, st.arg, st.field,
                                       st.line ? std::optional<std::int64_t>(*st.line * line_bytes) : std::nullopt, st.field2);
                if (p.stack || p.object == nullptr || !persistent(p) || p.log) continue;
                const std::int64_t l = p.offset ? floor_line(*p.offset) : unknown_line;
                const auto span = p.offset ? std::optional(std::make_pair(l, l)) : std::nullopt;
                check_log(p, span, call, s, *out);
            }
        if (callee.fences) fence(s);
        for (const auto& pd : callee.pendings) {
            if (pd.arg >= call.arg_size()) continue;
            const place p = target(call, pd.arg, pd.field,
                                   pd.line ? std::optional<std::int64_t>(*pd.line * line_bytes) : std::nullopt, pd.field2);
            if (p.stack || p.object == nullptr) continue;
            std::int64_t l = p.offset ? floor_line(*p.offset) : unknown_line;
            if (const auto keys = element_lines(p, 1); keys && keys->first == keys->second) l = keys->first;
            const auto span = p.offset ? std::optional(std::make_pair(l, l)) : std::nullopt;
            if (persistent(p) && p.sentinel && out != nullptr)  // an atomic's store() to a sentinel
                check_pair(p, span, call, s, *out);
            if (persistent(p) && out != nullptr) check_log(p, span, call, s, *out);
            if (persistent(p) && p.log) add_log(p, span);
            if (persistent(p)) s.d[{p.object, l}] = {pd.written_back ? dur::flush : dur::write, &call};
            s.f.erase({p.object, l});
        }
    }

    void at_return(const state& s, std::vector<report>& out) {
        if (collect_ != nullptr) {  // a summary run: record, report nothing
            collect_->fences = collect_->fences && s.fenced;
            for (const auto& [loc, c] : s.d) {
                const auto at = path2_of(loc.first);
                // A sentinel or durable field is the function's own to make durable: it is
                // reported there (analyse_function), not handed to the caller, unless it is
                // written back and only the fence is left to the caller (below).
                if (c.value == dur::fence || !at || (annotated_.count(c.origin) != 0 && c.value != dur::flush))
                    continue;
                collect_->pendings.push_back({at->first.arg, at->first.field,
                                              loc.second < 0 ? std::nullopt : std::optional<std::int64_t>(loc.second),
                                              c.value == dur::flush, at->second});
            }
            return;
        }
        for (const auto& [loc, c] : s.d) {
            if (c.value == dur::fence) continue;
            // A helper (not a root) that writes a sentinel back and leaves the fence to its
            // caller (persistent_vector_core::write_state): the caller's summary applies it.
            if (!root_ && c.value == dur::flush && path_of(loc.first)) continue;
            if (elsewhere_.count(c.origin) != 0) {
                out.push_back({pattern::durability, c.origin,
                               c.value == dur::write
                                   ? std::string("stores made elsewhere (FERRITE_FLOW_STORED_ELSEWHERE) are not written "
                                                 "back before the function returns")
                                   : std::string("stores made elsewhere (FERRITE_FLOW_STORED_ELSEWHERE) are written back "
                                                 "but not fenced before the function returns")});
                continue;
            }
            out.push_back({pattern::durability, c.origin,
                           c.value == dur::write
                               ? std::string("store to persistent memory is not written back before the function returns")
                               : std::string("store to persistent memory is written back but not fenced before the "
                                             "function returns")});
        }
    }

    void transfer(const llvm::Instruction& inst, state& s, std::vector<report>* out) {
        if (llvm::isa<llvm::ReturnInst>(inst)) {
            if (out != nullptr) at_return(s, *out);
            return;
        }
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
            if (const auto* callee = call->getCalledFunction();
                callee != nullptr && callee->getName() == "ferrite_flow_sentinel_at" && call->arg_size() == 1) {
                const place p = place_of(call->getArgOperand(0), layout_, through(), canonical_);
                if (!p.stack && p.object != nullptr)
                    marked_.insert({p.object, p.offset ? floor_line(*p.offset) : unknown_line});
                return;
            }
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
            if (const auto* callee = call->getCalledFunction();
                callee != nullptr && callee->getName() == "ferrite_flow_stored_elsewhere" && call->arg_size() == 2) {
                stored_elsewhere(*call, s);
                return;
            }
        const std::vector<event> events = events_of(inst);
        if (events.empty())
            if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
                if (const auto* callee = call->getCalledFunction())
                    if (auto it = known_.find(callee); it != known_.end()) apply(*call, it->second, s, out);
        for (const event& e : events) {
            switch (e.kind) {
                case event_kind::write:
                case event_kind::nt_write:
                    if (e.ptr != nullptr) write(e, inst, s, out);
                    break;
                case event_kind::flush:
                case event_kind::sync_flush:
                    if (e.ptr != nullptr) flush(e, inst, s, out);
                    break;
                case event_kind::fence: fence(s); break;
                case event_kind::persist:
                    if (e.ptr != nullptr) flush(e, inst, s, out);
                    fence(s);
                    break;
            }
        }
    }

    const llvm::Function& fn_;
    bool root_;
    const summaries& known_;
    summary* collect_;                                // a summary run: where it goes
    llvm::DominatorTree tree_;                        // for the loops (exit_write_backs)
    llvm::LoopInfo loops_;
    std::set<const llvm::Instruction*> annotated_;    // stores to sentinel / durable / log fields
    std::set<const llvm::Instruction*> elsewhere_;    // FERRITE_FLOW_STORED_ELSEWHERE's declarations
    std::set<location> logs_;                          // lines a log word's stores armed
    std::set<const llvm::Instruction*> disarms_;       // log word stores of zero
    std::set<location> marked_;                        // FERRITE_FLOW_SENTINEL_AT's words
    std::set<std::pair<const llvm::BasicBlock*, const llvm::BasicBlock*>> hints_;  // find_hints' edges
    struct flag_web {
        std::set<cfg_edge> sets;                             // the edges that make the flag non-zero
        std::map<const llvm::BasicBlock*, state> outs;  // the fixpoint without them
    };
    std::vector<flag_web> flags_;                       // find_flags'
    std::map<cfg_edge, std::size_t> zero_edge_of_;          // a branch's zero edge -> its flag
    const std::set<cfg_edge>* cut_ = nullptr;               // the edges a flag's fixpoint leaves out
    std::set<cfg_edge> ret_cut_;                            // a zero-return run's left-out edges (cut_returns)
    bool in_reached_ = false;                               // in_state's last block: entry, or a predecessor reached
    std::map<cfg_edge, const llvm::CallBase*> call_zero_edge_;  // a branch's zero edge -> the call tested
    const llvm::CallBase* zero_call_ = nullptr;             // the call in_state re-runs with its on_zero
    bool recomputing_ = false;                              // in that re-run (one level)
    std::function<const passthrough*(const llvm::Function&)> through_ = [this](const llvm::Function& f) {
        return returned(f);
    };
    std::map<const llvm::Value*, const llvm::Value*> canonical_of_;  // memo of canonical()
    std::map<location, const llvm::Value*> canonical_at_;           // (object, offset) -> its value
    std::map<location, const llvm::Value*> element_field_;          // (object, field in element) -> its value
    std::set<const llvm::Value*> skipped_;  // elements of FERRITE_FLOW_SKIP containers
    std::map<const llvm::Value*, location> field_of_;  // a canonical read -> the field it reads
    std::map<location, place> bound_;  // a stack object's field -> the pointer a callee bound to it
    std::set<const llvm::Value*> cursors_;  // objects reached through an iterator on the stack
    std::set<const llvm::Value*> in_progress_;  // reads canonical() is resolving through the stack
    struct delete_value {
        void operator()(llvm::Instruction* i) const { i->deleteValue(); }
    };
    std::vector<std::unique_ptr<llvm::Instruction, delete_value>> standins_;  // field_object's
    std::function<const llvm::Value*(const llvm::Value&)> canonical_ = [this](const llvm::Value& v) {
        return canonical(v);
    };
    const llvm::DataLayout& layout_;
    std::map<const llvm::Instruction*, unsigned> order_;
};

// Whether an integer value is computed from an argument other than through a load (a
// block's offset passed in: `heap.at(off)`), a few levels deep; a load (a field read) ends it.
bool from_argument(const llvm::Value* v, unsigned depth = 0) {
    if (llvm::isa<llvm::Argument>(v)) return true;
    if (depth > 8 || llvm::isa<llvm::LoadInst>(v) || llvm::isa<llvm::CallBase>(v)) return depth > 8;
    if (const auto* inst = llvm::dyn_cast<llvm::Instruction>(v)) {
        for (const llvm::Value* op : inst->operands())
            if (from_argument(op, depth + 1)) return true;
    }
    return false;
}

// Whether a pointer's variable offsets (its GEPs' indices, down to its base) come from an
// argument (from_argument): then each call may return different memory.
bool offset_from_argument(const llvm::Value* v) {
    for (;;) {
        v = v->stripPointerCasts();
        const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(v);
        if (gep == nullptr) return false;
        for (const llvm::Value* index : gep->indices())
            if (from_argument(index)) return true;
        v = gep->getPointerOperand();
    }
}

// The argument (and offset) every return of a pointer-returning function gives back, or
// the pointer field of an argument it loads (passthrough::load).
std::optional<passthrough> returned_argument(const llvm::Function& f, const summaries& known) {
    if (!f.getReturnType()->isPointerTy()) return std::nullopt;
    const auto through = [&](const llvm::Function& g) -> const passthrough* {
        auto it = known.find(&g);
        return it != known.end() && it->second.returns ? &*it->second.returns : nullptr;
    };
    const llvm::DataLayout& layout = f.getParent()->getDataLayout();
    std::optional<passthrough> out;
    std::vector<const llvm::Value*> values;  // every return's value; a null one names no memory
    bool null = false;                       // some return is null: only for the getters below
    for (const auto& bb : f) {
        const auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator());
        if (ret == nullptr || ret->getReturnValue() == nullptr) continue;
        const llvm::Value* v = ret->getReturnValue();
        // `return h->data ? base + h->data : nullptr` (the vector's array()): the phi's
        // non-null values are the returns (issue 22's eighth round).
        if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(v);
            phi != nullptr && phi->getParent() == &bb && llvm::any_of(phi->incoming_values(), [](const llvm::Value* in) {
                return llvm::isa<llvm::ConstantPointerNull>(in);
            })) {
            null = true;
            for (const llvm::Value* in : phi->incoming_values())
                if (!llvm::isa<llvm::ConstantPointerNull>(in)) values.push_back(in);
        } else {
            values.push_back(v);
        }
    }
    for (const llvm::Value* v : values) {
        const place p = place_of(v, layout, through);
        passthrough here{0, p.offset, std::nullopt, p.skip, std::nullopt};
        // A field getter called on an argument's field (data() -> array(pool_, h_)), or an
        // external getter (pool.base(), a pseudo-field) on an argument: a getter of that
        // field of the argument (issue 22's eighth round).
        // Not when the offset comes from an argument (`heap.at(off)`: every block of the pool
        // would be one object).
        std::optional<std::int64_t> field;
        const llvm::Value* holder = nullptr;
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(p.object); call != nullptr && !offset_from_argument(v)) {
            const llvm::Function* callee = call->getCalledFunction();
            const passthrough* inner = callee != nullptr ? through(*callee) : nullptr;
            // Only a getter of a pseudo-field (an external getter's: array() on pool.base()):
            // one of a real field plus a computed offset (buddy_heap::at, whose callers'
            // blocks, allocate()'s, would all be one object) stays unknown.
            if (inner != nullptr && inner->load && *inner->load < -(std::int64_t{1} << 39) && !inner->load2 &&
                inner->arg < call->arg_size()) {
                field = inner->load;
                holder = call->getArgOperand(inner->arg);
            } else if (const auto key = external_getter_key(*call)) {
                field = key;
                holder = call->getArgOperand(0);
            }
        }
        if (holder != nullptr) {
            const place from = place_of(holder, layout, through);
            const auto* a = llvm::dyn_cast<llvm::Argument>(from.object);
            if (a == nullptr || !from.offset) return std::nullopt;
            here.arg = a->getArgNo();
            here.load = *from.offset + *field;
        } else if (null) {
            return std::nullopt;  // `return found ? arg : nullptr` stays what it was: no accessor
        } else if (const auto* a = llvm::dyn_cast<llvm::Argument>(p.object)) {
            here.arg = a->getArgNo();
        } else if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(p.object)) {
            const place from = place_of(load->getPointerOperand(), layout, through);
            if (!from.offset) return std::nullopt;
            if (const auto* a2 = llvm::dyn_cast<llvm::Argument>(from.object)) {
                here.arg = a2->getArgNo();
                here.load = from.offset;
            } else if (const auto* inner = llvm::dyn_cast<llvm::LoadInst>(from.object)) {
                // Two levels: a pointer field of what an argument's pointer field points to.
                const place outer = place_of(inner->getPointerOperand(), layout, through);
                const auto* a3 = llvm::dyn_cast<llvm::Argument>(outer.object);
                if (a3 == nullptr || !outer.offset) return std::nullopt;
                here.arg = a3->getArgNo();
                here.load = outer.offset;
                here.load2 = from.offset;
            } else {
                return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
        if (!join_returns(out, here)) return std::nullopt;
    }
    return out;
}

// The edges after which `f` can only return non-zero (summary::on_zero): for each return,
// its value (through casts) a zero constant (none), a non-zero constant (the edges into its
// block), a phi of constants in the return's block (the edges that bring a non-zero one), or
// an i1 that is the condition of a branch outside any cycle (that branch's true edge: a path
// returning zero took the false one). Nullopt when a return is none of these, or no zero
// return is left.
std::optional<std::set<cfg_edge>> zero_return_cut(const llvm::Function& f) {
    if (!f.getReturnType()->isIntegerTy()) return std::nullopt;
    std::set<cfg_edge> cut;
    bool zero = false;
    const auto strip = [](const llvm::Value* v) {
        while (const auto* cast = llvm::dyn_cast<llvm::CastInst>(v)) v = cast->getOperand(0);
        return v;
    };
    for (const auto& bb : f) {
        const auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator());
        if (ret == nullptr) continue;
        const llvm::Value* v = strip(ret->getReturnValue());
        if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
            if (c->isZero()) {
                zero = true;
            } else {
                if (&bb == &f.getEntryBlock()) return std::nullopt;
                for (const llvm::BasicBlock* pred : llvm::predecessors(&bb)) cut.insert({pred, &bb});
            }
        } else if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(v); phi != nullptr && phi->getParent() == &bb) {
            for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
                const auto* in = llvm::dyn_cast<llvm::ConstantInt>(strip(phi->getIncomingValue(i)));
                if (in == nullptr) return std::nullopt;
                if (in->isZero())
                    zero = true;
                else
                    cut.insert({phi->getIncomingBlock(i), &bb});
            }
        } else if (v->getType()->isIntegerTy(1)) {
            const llvm::BranchInst* guard = nullptr;
            for (const llvm::User* u : v->users())
                if (const auto* br = llvm::dyn_cast<llvm::BranchInst>(u); br != nullptr && br->getParent()->getParent() == &f)
                    guard = br;
            if (guard == nullptr || llvm::isPotentiallyReachable(guard->getSuccessor(0), guard->getParent()) ||
                llvm::isPotentiallyReachable(guard->getSuccessor(1), guard->getParent()))
                return std::nullopt;
            cut.insert({guard->getParent(), guard->getSuccessor(0)});
            zero = true;
        } else {
            return std::nullopt;
        }
    }
    if (!zero || cut.empty()) return std::nullopt;
    return cut;
}

}  // namespace

void analyse_function(const llvm::Function& f, bool root, const summaries& known, std::vector<report>& out) {
    if (f.isDeclaration()) return;
    analysis(f, root, known, nullptr).run(out);
}

summary summarise_function(const llvm::Function& f, const summaries& known) {
    summary out;
    out.fences = true;  // and-ed over the returns; a function that never returns never fences
    bool returns = false;
    for (const auto& bb : f)
        returns |= llvm::isa<llvm::ReturnInst>(bb.getTerminator());
    std::vector<report> none;
    analysis a(f, false, known, &out);
    a.run(none);
    out.fences = out.fences && returns;
    out.returns = returned_argument(f, known);
    if (!out.returns) out.returns = a.bound_return();
    if (auto cut = zero_return_cut(f)) {
        auto zero = std::make_shared<summary>();
        zero->fences = returns;
        analysis z(f, false, known, zero.get());
        z.cut_returns(std::move(*cut));
        z.run(none);
        zero->returns = out.returns;
        out.on_zero = std::move(zero);
    }
    return out;
}

}  // namespace ferrite::flow
