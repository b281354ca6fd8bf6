// bench/workloads.hpp: the operation mixes `ferrite bench` runs (PFC thesis, ch. 6).
//
// A workload is a per-thread stream of operations from the vocabulary of subject.hpp. It
// names the operations it needs, so the harness runs a structure only on workloads it fully
// supports, and an initial size for workloads that read or swap existing elements (the
// subject is filled before the timed region).
//
//   push-pop       push_back, pop_back alternately (the thesis' headline workload)
//   swap-push-pop  push_back, swap, pop_back, swap, ... (half swaps, half push-pop)
//   swap           swap(i, j) of two random indices
//   get-push-pop   push_back, get, pop_back, get, ... (half gets, half push-pop)
//   get            get(i) of a random index
//   rand-op        push_back or pop_back at random, 50/50
//   enq-deq        push_back then pop_front (a queue's enqueue/dequeue pairs)
//   deque-pairs    a random side, then a push and a pop at that side
//
// Keyed workloads (maps and sets; subject.hpp), over a structure prefilled with N keys
// (--keys, the keys 2i for i < N):
//   set-mix    contains with probability reads% (--reads, default 90), else insert or
//              erase, 50/50, of a key drawn from [0, 2N): half the keys drawn are present,
//              so inserts and erases succeed about half the time and the size stays near N
//              (the mix of the durable-sets papers, e.g. Zuriel et al., OOPSLA 2019)
//   ycsb-load  insert only, of new keys (YCSB's load phase); prefill 0 by default
//   ycsb-a     50 % get, 50 % put (update) of a present key (YCSB workload A)
//   ycsb-b     95 % get, 5 % put (B)
//   ycsb-c     get only (C)
//   ycsb-e     95 % scan of 1..100 keys (uniform) from a present key, 5 % insert of a new
//              key (E)
// Durable-set workloads (structures whose kind can reopen, or that insert and erase):
//   set-recovery  not a stream: a structure prefilled with N keys is closed and opened
//                 again (the pool too, as after a restart), and the harness times the
//                 structure's open() with `threads` recovery threads (harness.hpp); the
//                 record's ops are the keys found, so ops/s reads as keys recovered per second
//   tree-recovery not a stream either: as set-recovery, but the harness times the open and
//                 the first completed lookup after it (a get of a present key: the time a
//                 restarted program waits before it serves a read), `threads` load threads;
//                 then, untimed, it checks every key and value (visit): ops = keys found.
//                 For the CpNvm trees (eager: the open loads the whole image; lazy: pages
//                 are loaded on first touch, so the lookup loads a root-to-leaf path)
//   set-growth    the structure starts with growth_start_keys keys and its threads insert
//                 new keys until it holds N (--keys): the timed region and the latency are
//                 those of inserts while the table doubles; then, untimed for throughput,
//                 each thread runs --ops steady pairs (erase its oldest key, insert a new
//                 one: the size stays N) whose insert latencies are the steady-state figures
//                 the growth latencies are compared with
// Keys are drawn uniformly or from YCSB's scrambled Zipfian (theta 0.99, zipfian.hpp):
// --distribution, default zipfian for the ycsb-* workloads and uniform for set-mix. "A
// present key" is prefill_key(r) for a record r < N drawn so; new keys are odd (never
// prefilled) and unique per thread: 2 * ((tid + 1) << 40 | sequence number) + 1.
//
// Streams are deterministic: thread t of a run with seed s always draws the same operations.
// Indices are drawn uniformly below the initial size (subjects reduce them modulo their
// current size); pushed values are unique per thread: (tid + 1) << 40 | sequence number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/subject.hpp"
#include "bench/zipfian.hpp"

namespace ferrite::bench {

enum class pattern : std::uint8_t {
    push_pop, swap_push_pop, swap, get_push_pop, get, rand_op, enq_deq, deque_pairs,
    set_mix, ycsb_load, ycsb_a, ycsb_b, ycsb_c, ycsb_e, set_recovery, set_growth, tree_recovery
};

enum class key_distribution : std::uint8_t { uniform, zipfian };

struct workload {
    std::string name;
    std::string summary;  // one line for `ferrite bench --list`
    std::vector<op> needs;
    std::uint64_t initial_size = 0;  // default elements (keyed: keys) present before timing
    pattern kind = pattern::push_pop;
    op_family family = op_family::sequence;
    key_distribution distribution = key_distribution::uniform;  // keyed: the default
    bool needs_reopen = false;  // set-recovery, tree-recovery: only kinds that reopen (subject.hpp)
};

inline constexpr std::uint64_t default_initial_size = 1024;
inline constexpr std::uint64_t default_keys = 100'000;
inline constexpr unsigned default_reads_percent = 90;
inline constexpr std::uint64_t max_scan_length = 100;
inline constexpr std::uint64_t growth_start_keys = 1024;  // set-growth's prefill ("from 1K")

// The seq-th new key of thread tid (odd, never prefilled, unique per thread). set-growth's
// i-th insert of a thread is new_key_of(tid, i), so its steady phase erases them in order;
// ycsb-load and ycsb-e draw theirs from the same sequence (shared with the values).
constexpr std::uint64_t new_key_of(unsigned tid, std::uint64_t seq) noexcept {
    return 2 * (((std::uint64_t{tid} + 1) << 40) | seq) + 1;
}

// What a keyed stream draws beyond its workload: the key distribution and set-mix's reads.
struct key_options {
    std::optional<key_distribution> distribution;  // nullopt: the workload's default
    unsigned reads_percent = default_reads_percent;
};

std::string_view to_string(key_distribution) noexcept;
std::optional<key_distribution> key_distribution_from_string(std::string_view) noexcept;
std::string_view to_string(op_family) noexcept;

// Every workload, in the order `--list` prints them.
const std::vector<workload>& workloads();
// nullptr if no workload has that name.
const workload* find_workload(std::string_view name);

std::string_view to_string(op) noexcept;

// Whether a structure supporting `supports` can run the workload; `missing` gets the
// operations it lacks.
bool can_run(const std::vector<op>& supports, const workload& w, std::vector<op>* missing = nullptr);
// Whether the structure runs the workload: the same family and every operation it needs.
bool can_run(const subject_kind& s, const workload& w);

// One thread's operation stream.
class op_stream {
public:
    struct step {
        op o;
        std::uint64_t a;
        std::uint64_t b;
    };

    // index_range: indices are drawn in [0, index_range); 0 draws any 64-bit value. Keyed
    // workloads: index_range is the number of prefilled keys N.
    op_stream(const workload& w, unsigned tid, std::uint64_t seed, std::uint64_t index_range,
              const key_options& keys = {});
    step next() noexcept;

private:
    std::uint64_t random() noexcept;  // splitmix64
    std::uint64_t index() noexcept { return range_ ? random() % range_ : random(); }
    std::uint64_t value() noexcept { return value_base_ | seq_++; }
    // Keyed: a draw in [0, key_items_) from the distribution; a present key; a new key.
    std::uint64_t draw() noexcept;
    std::uint64_t present_key() noexcept { return prefill_key(draw()); }
    std::uint64_t new_key() noexcept { return 2 * value() + 1; }  // = new_key_of(tid, seq)
    bool percent(unsigned p, std::uint64_t x) const noexcept { return x % 100 < p; }

    pattern kind_;
    std::optional<scrambled_zipfian> zipfian_;  // keyed workloads drawing Zipfian keys
    std::uint64_t key_items_ = 1;
    unsigned reads_ = default_reads_percent;
    std::uint64_t state_;
    std::uint64_t range_;
    std::uint64_t value_base_;
    std::uint64_t seq_ = 0;
    std::uint64_t i_ = 0;  // position in the stream
    op pending_ = op::pop_back;  // deque-pairs: the pop that follows a push
};

}  // namespace ferrite::bench
