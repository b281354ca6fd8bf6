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
// Streams are deterministic: thread t of a run with seed s always draws the same operations.
// Indices are drawn uniformly below the initial size (subjects reduce them modulo their
// current size); pushed values are unique per thread: (tid + 1) << 40 | sequence number.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

enum class pattern : std::uint8_t {
    push_pop, swap_push_pop, swap, get_push_pop, get, rand_op, enq_deq, deque_pairs
};

struct workload {
    std::string name;
    std::string summary;  // one line for `ferrite bench --list`
    std::vector<op> needs;
    std::uint64_t initial_size = 0;  // default elements present before timing
    pattern kind = pattern::push_pop;
};

inline constexpr std::uint64_t default_initial_size = 1024;

// Every workload, in the order `--list` prints them.
const std::vector<workload>& workloads();
// nullptr if no workload has that name.
const workload* find_workload(std::string_view name);

std::string_view to_string(op) noexcept;

// Whether a structure supporting `supports` can run the workload; `missing` gets the
// operations it lacks.
bool can_run(const std::vector<op>& supports, const workload& w, std::vector<op>* missing = nullptr);

// One thread's operation stream.
class op_stream {
public:
    struct step {
        op o;
        std::uint64_t a;
        std::uint64_t b;
    };

    // index_range: indices are drawn in [0, index_range); 0 draws any 64-bit value.
    op_stream(const workload& w, unsigned tid, std::uint64_t seed, std::uint64_t index_range) noexcept;
    step next() noexcept;

private:
    std::uint64_t random() noexcept;  // splitmix64
    std::uint64_t index() noexcept { return range_ ? random() % range_ : random(); }
    std::uint64_t value() noexcept { return value_base_ | seq_++; }

    pattern kind_;
    std::uint64_t state_;
    std::uint64_t range_;
    std::uint64_t value_base_;
    std::uint64_t seq_ = 0;
    std::uint64_t i_ = 0;  // position in the stream
    op pending_ = op::pop_back;  // deque-pairs: the pop that follows a push
};

}  // namespace ferrite::bench
