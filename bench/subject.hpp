// bench/subject.hpp: what a structure provides to `ferrite bench`.
//
// A *subject* is one structure under measurement (vector-pfc, vector-mutex, stack-pmdk...).
// The harness creates a fresh subject for every measurement (one thread count, one
// repetition), calls attach(tid) in each worker before the timed region, then issues
// operations drawn by the workload. Every operation of the shared vocabulary below is
// optional: a subject says which it supports, and a workload is offered only to subjects
// that support all its operations.
//
// Subjects and workloads come in two families: *sequence* (vectors, stacks, queues, deques:
// push/pop at the ends, get/swap by index) and *keyed* (maps and sets: insert, erase,
// contains, get, put, scan by key). A structure runs only the workloads of its family. A
// keyed subject made with initial_size n holds the keys prefill_key(i) = 2i for i < n (any
// values) before the timed region, so that keyed workloads know which keys are present.
//
// Durable keyed subjects (the durable sets, bench/sets/) can also be closed and opened again
// from their pool: the set-recovery workload times that open (workloads.hpp). A kind says so
// with `reopens`; the harness then calls close_for_reopen() (untimed: drop the volatile
// structure, close and reopen the pool as a restart would) and reopen(threads) (timed: the
// structure's open with that many recovery threads), which returns the keys it found.
//
// A combining subject reports its engine's record (ferrite/combining/stats.hpp: passes,
// operations, persistence instructions of the combiners and in total), and the harness reads
// pwb/op, pfence/op and the batch size from its difference over the timed region. For the
// others the harness counts persistence instructions from pmem's per-thread counters
// (ferrite/pmem/counters.hpp), summed over workers, and reports no batch size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/combining/stats.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite::bench {

// What a keyed subject's reads return goes to the reading worker's own line (sinks, one per
// worker), so that no read is optimised away and workers do not share a line.
struct alignas(64) sink {
    std::uint64_t v = 0;
};

// The operation vocabulary of every workload. back = the end a vector/stack pushes to;
// a queue pushes at the back and pops at the front. Arguments (a, b) by operation:
//   sequence: push_back/push_front(value, -), pop_back/pop_front(-, -), get(index, -),
//             swap(index, index); indices are reduced modulo the size by the subject.
//   keyed:    insert(key, value) if absent, erase(key, -), contains(key, -), get(key, -),
//             put(key, value) = insert or assign (upsert), scan(first key, count <= 100):
//             visit the count smallest keys >= first key, in order.
// get reads one element in both families: by index in a sequence, by key in a keyed one.
enum class op : std::uint8_t { push_back, pop_back, push_front, pop_front, get, swap,
                               insert, erase, contains, put, scan };
inline constexpr std::size_t op_count = 11;

enum class op_family : std::uint8_t { sequence, keyed };

// The key of the i-th element a keyed subject is filled with before timing.
constexpr std::uint64_t prefill_key(std::uint64_t i) noexcept { return 2 * i; }

// Switches for ablations (Figs 6.2, 6.3 of the PFC thesis); subjects ignore what they lack.
struct subject_options {
    bool nt_stores = true;   // non-temporal stores for pushed values and logs
    bool futex_wait = true;  // spin-then-futex waiting (false: pure spin)
    bool elimination = true; // push/pop elimination inside a combining batch
    bool tid_claims = true;  // DFC: one thread per thread id enforced (dfc_tid_claims.hpp)
    bool one_fence = true;   // PFC vector/stack/queue/deque: one pfence per pass (false: the previous two-fence pushes)
    bool sticky = true;      // PFC stack/queue/deque: the sticky combiner (false: the lock to whoever sees it free)
    bool presized = true;    // split-ordered hash sets: buckets ready for the prefill (expected_size;
                             // false: grown from one bucket by the prefill's inserts)
};

// make() returns a subject that already holds initial_size elements (the subject fills
// itself, outside the timed region and before any worker attaches).
struct subject_config {
    unsigned threads = 1;           // workers that will attach
    std::uint64_t initial_size = 0; // elements (keyed: keys prefill_key(i)) present before timing
    std::filesystem::path pool_dir; // where pool files go (scratch; removed by the subject)
    subject_options options;
    // Keyed: the most distinct keys the structure may hold at once during the measurement
    // (prefill, key range, inserts), for subjects that size a pool up front; 0: unknown
    // (the subject picks a margin over initial_size).
    std::uint64_t capacity_hint = 0;
};

class subject {
public:
    virtual ~subject() = default;
    virtual void attach(unsigned tid) { (void)tid; }  // in the worker, before timing
    virtual void detach(unsigned tid) { (void)tid; }  // in the worker, after timing
    // In the worker, around a wait for the other workers in which it runs no operation (the
    // harness's phase barriers): a subject whose threads wait for each other inside
    // operations (CpNvm's checkpoint barrier) must not count on this one meanwhile.
    virtual void pause(unsigned tid) { (void)tid; }
    virtual void resume(unsigned tid) { (void)tid; }
    // One operation; arguments a, b are values or indices (reduced modulo size by the subject).
    virtual void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) = 0;
    // The combining engine's record since creation (every engine's stats()), nullopt for a
    // structure that does not combine.
    virtual std::optional<combining::combining_stats> combining_stats() const { return std::nullopt; }
    // False for subjects whose persistence instructions bypass ferrite/pmem (PMDK issues its
    // own flushes): the harness then reports pwb/op and pfence/op as unknown, not as 0.
    virtual bool persistence_counted() const { return true; }
    // True for subjects whose papers report the combiners' persistence apart from the total
    // (DFC: "DFC" and "DFC-TOTAL"): the harness then also reports the record's `combiner`
    // part over the timed region as combiner_pwb_per_op / combiner_pfence_per_op.
    virtual bool reports_combiner_persistence() const { return false; }
    // Kinds with `reopens` only (set-recovery): see the header comment. The defaults throw.
    virtual void close_for_reopen();
    virtual std::uint64_t reopen(unsigned recovery_threads);
    // tree-recovery: the value of `key` looked up on the reopened structure from the calling
    // (unregistered) thread, nullopt if absent. The default throws.
    virtual std::optional<std::uint64_t> lookup_after_reopen(std::uint64_t key);
    // Keyed subjects, for the tests that check them against a model (quiescent: no worker
    // runs). visit(f) calls f(key, value) for every key held and returns true, false where
    // the subject cannot enumerate; read_checksum(tid) is what worker tid's reads added up
    // since creation (contains: 1 per hit, get: the value found), nullopt where not kept.
    virtual bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const {
        (void)f;
        return false;
    }
    virtual std::optional<std::uint64_t> read_checksum(unsigned tid) const {
        (void)tid;
        return std::nullopt;
    }
};

struct subject_kind {
    std::string name;     // e.g. "vector-pfc"
    std::string summary;  // one line for `ferrite bench --list`
    std::vector<op> supports;
    std::function<std::unique_ptr<subject>(const subject_config&)> make;
    op_family family = op_family::sequence;
    bool reopens = false;  // close_for_reopen() / reopen() work: it can run set-recovery (tree-recovery: and
                           // lookup_after_reopen(), visit())
};

}  // namespace ferrite::bench
