// examples/exactly_once.cpp: every job enqueued exactly once, however often the program is
// killed. The exactly-once pattern of docs/dfc.md with a named ferrite::dfc_queue, run by
// tests/cli/examples_test.sh, which kills it with SIGKILL at random moments and restarts it.
//
//   exactly_once POOL_PATH JOBS     each of 2 threads enqueues its jobs 0..JOBS-1; prints
//                                   "done" when all are in; a later run checks the queue
//                                   and prints "exactly once: N jobs" (or what is wrong)
//
// The program's own persistent state, per thread, is in the pool root: the next job to
// enqueue, and the (seq, job) of the operation it is about to run, noted durably *before*
// the operation. After a restart, recover(tid) says whether that operation took effect: if
// its seq is the noted one, it did (once), and the thread moves on; if the seq is older, it
// never took effect, and the thread runs it again (with the same seq).
#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace {

constexpr unsigned threads = 2;
constexpr std::uint64_t heap_bytes = 32 << 20;

struct alignas(64) thread_progress {  // persistent, one line per thread
    std::uint64_t next_job;     // jobs below it are known to be in the queue
    std::uint64_t noted_seq;    // the operation about to run (0: none yet)
    std::uint64_t noted_job;
};
struct program_state {
    std::array<thread_progress, threads> progress;
};

// A thread's noted operation is settled: done (move on) or never happened (run it again).
void settle(thread_progress& p, ferrite::dfc_queue<std::uint64_t>& jobs, unsigned tid) {
    const auto r = jobs.recover(tid);
    if (p.noted_seq != 0 && r.seq == p.noted_seq && r.took_effect && p.next_job == p.noted_job) {
        p.next_job = p.noted_job + 1;  // it took effect, exactly once
        ferrite::pmem::pwb(&p);
        ferrite::pmem::pfence();
    }
}

void run(thread_progress& p, ferrite::dfc_queue<std::uint64_t>& jobs, unsigned tid, std::uint64_t count) {
    while (p.next_job < count) {
        const std::uint64_t job = p.next_job;
        p.noted_seq = jobs.next_seq(tid);  // note the operation before running it
        p.noted_job = job;
        ferrite::pmem::pwb(&p);
        ferrite::pmem::pfence();
        jobs.enqueue(tid, std::uint64_t{tid} << 32 | job);
        p.next_job = job + 1;
        ferrite::pmem::pwb(&p);
        ferrite::pmem::pfence();
    }
}

// Every thread's jobs 0..count-1 are in the queue once each, in order per thread.
std::string check(const std::vector<std::uint64_t>& queued, std::uint64_t count) {
    std::array<std::uint64_t, threads> next{};
    for (auto v : queued) {
        const auto tid = static_cast<unsigned>(v >> 32);
        const std::uint64_t job = v & 0xffffffffu;
        if (tid >= threads || job != next[tid])
            return "thread " + std::to_string(tid) + " job " + std::to_string(job) + " is out of order, lost or doubled";
        ++next[tid];
    }
    for (unsigned t = 0; t < threads; ++t)
        if (next[t] != count) return "thread " + std::to_string(t) + " has " + std::to_string(next[t]) + " jobs";
    return {};
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc < 3) {
        std::fprintf(stderr, "usage: exactly_once POOL_PATH JOBS\n");
        return 2;
    }
    const std::filesystem::path path = argv[1];
    const std::uint64_t count = std::stoull(argv[2]);
    // Created with its heap, catalog and our progress area if absent; opened (and recovered,
    // the queue too, if the last run crashed) otherwise. A kill at any moment leaves a pool
    // that opens.
    auto store = ferrite::store::open_or_create(
        path, "exactly-once", {.size = 64 << 20, .heap_size = heap_bytes, .user_bytes = sizeof(program_state)});
    auto& state = store.user_root<program_state>();  // zero on the first run
    auto& names = store.names();
    auto jobs = names.open_dfc_queue<std::uint64_t>("jobs", threads, 64);
    for (unsigned t = 0; t < threads; ++t) settle(state.progress[t], *jobs, t);
    if (state.progress[0].next_job >= count && state.progress[1].next_job >= count) {
        const auto problem = check(jobs->unsynchronized_contents(), count);
        if (!problem.empty()) {
            std::printf("NOT exactly once: %s\n", problem.c_str());
            return 1;
        }
        std::printf("exactly once: %llu jobs\n", static_cast<unsigned long long>(count * threads));
        return 0;
    }
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) workers.emplace_back([&, t] { run(state.progress[t], *jobs, t, count); });
    for (auto& w : workers) w.join();
    std::printf("done\n");
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "exactly_once: %s\n", e.what());
    return 1;
}
