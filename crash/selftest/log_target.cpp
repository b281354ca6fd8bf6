// crash/selftest/log_target.cpp: a per-thread append-only log, the smallest structure with a
// commit flag, written correctly (`log`, `log-nt`) and with the classic persistence bugs.
//
// Layout (root object): a header line {threads, ops}, then per thread one line holding
// `count` and a line-aligned array of `ops` 8-byte entries.
//
//   append(v), correct:   entry[c] = v; pwb(entry); pfence;       // PP: data durable...
//                         count = c + 1; pwb(count); pfence;     // LP/PP: ...before the flag
//   log-nt:               nt_store(entry[c], v); pfence; then the same commit.
//   buggy-log-no-flush:   entry then count, with no pwb+pfence between (only count flushed)
//   buggy-log-no-fence:   pwb(entry) but no pfence before the count store
//   buggy-log-wrong-line: pwb of the line after the entry's instead of the entry's
//   buggy-log-flag-first: count committed before the entry is written (reordered flag)
//
// Recovery: nothing to repair (count is the commit point). Checker, per thread with c
// returned appends and p in {0,1} pending: completed <= count <= completed + p, and every
// entry below count holds exactly the value appended there.
#include <cstring>
#include <string>

#include "ferrite/pmem/primitives.hpp"
#include "selftest.hpp"

namespace ferrite::crash::selftest {
namespace {

enum class flavour { correct, nt, no_flush, no_fence, wrong_line, flag_first };

struct log_header {
    std::uint64_t threads;
    std::uint64_t ops;
};

// The per-thread part of the root: a count line, then the entries.
std::uint64_t thread_area_bytes(std::uint64_t ops) { return 64 + round_up_to_line(ops * 8); }
std::uint64_t root_bytes(const sim::run_config& c) { return 64 + c.threads * thread_area_bytes(c.ops_per_thread); }

struct thread_log {
    std::uint64_t* count;
    std::uint64_t* entries;
};

thread_log log_of(std::byte* root, std::uint64_t ops, unsigned tid) {
    auto* area = root + 64 + tid * thread_area_bytes(ops);
    return {reinterpret_cast<std::uint64_t*>(area), reinterpret_cast<std::uint64_t*>(area + 64)};
}

class log_workload final : public sim::workload {
public:
    log_workload(pmem::pool& p, const sim::run_config& c, flavour f)
        : root_(static_cast<std::byte*>(p.root_bytes(root_bytes(c)))), config_(c), flavour_(f),
          progress_(c.threads) {
        auto* h = reinterpret_cast<log_header*>(root_);
        h->threads = c.threads;
        h->ops = c.ops_per_thread;
        pmem::pwb(h);
        pmem::pfence();
    }

    void run_thread(unsigned tid) override {
        auto log = log_of(root_, config_.ops_per_thread, tid);
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            progress_.begin(tid);
            append(log, i, operand(config_.seed, tid, i));
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool&) const override {}  // count is the commit point: nothing to repair

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto* root = static_cast<std::byte*>(image.root_bytes(root_bytes(config_)));
        for (unsigned t = 0; t < config_.threads; ++t) {
            const auto log = log_of(root, config_.ops_per_thread, t);
            const auto& p = at_crash[t];
            const auto count = *log.count;
            if (count < p.completed)
                return "thread " + std::to_string(t) + ": " + std::to_string(p.completed) +
                       " appends returned but the log has " + std::to_string(count);
            if (count > p.completed + (p.pending ? 1 : 0))
                return "thread " + std::to_string(t) + ": log has " + std::to_string(count) +
                       " entries, more than the " + std::to_string(p.completed) + " returned + " +
                       (p.pending ? "1 pending" : "0 pending");
            for (std::uint64_t i = 0; i < count; ++i)
                if (log.entries[i] != operand(config_.seed, t, i))
                    return "thread " + std::to_string(t) + ": entry " + std::to_string(i) +
                           " below the committed count holds " + std::to_string(log.entries[i]) +
                           ", not the appended value";
        }
        return {};
    }

private:
    FERRITE_FLOW_ROOT void append(const thread_log& log, std::uint64_t i, std::uint64_t v) const {
        auto* entry = &log.entries[i];
        switch (flavour_) {
            case flavour::correct:
                *entry = v;
                pmem::pwb(entry);
                pmem::pfence();  // PP: the entry is durable before the count names it
                break;
            case flavour::nt:
                pmem::nt_store(entry, v);
                pmem::pfence();  // PP: the NT store is durable before the count names it
                break;
            case flavour::no_flush:
                *entry = v;  // BUG: not written back before the flag
                break;
            case flavour::no_fence:
                *entry = v;
                pmem::pwb(entry);  // BUG: no pfence: the count may persist first
                break;
            case flavour::wrong_line:
                *entry = v;
                pmem::pwb(entry + 8);  // BUG: writes back the next line, not the entry's
                pmem::pfence();
                break;
            case flavour::flag_first:
                *log.count = i + 1;  // BUG: the flag is committed before the data exists
                pmem::pwb(log.count);
                pmem::pfence();
                *entry = v;
                pmem::pwb(entry);
                pmem::pfence();
                return;
        }
        FERRITE_FLOW_SENTINEL_AT(log.count); *log.count = i + 1;  // LP
        pmem::pwb(log.count);
        pmem::pfence();  // PP: the append is durable when it returns
    }

    std::byte* root_;
    sim::run_config config_;
    flavour flavour_;
    sim::op_progress progress_;
};

}  // namespace

void register_log_targets(sim::target_registry& r) {
    const auto add = [&](const char* name, const char* summary, flavour f) {
        r.add(std::make_unique<sim::simple_target>(
            name, summary,
            [f](pmem::pool& p, const sim::run_config& c) { return std::make_unique<log_workload>(p, c, f); },
            [](const sim::run_config& c) {
                return std::max<std::uint64_t>(64 * 1024, round_up_to_line(4096 + root_bytes(c)) + 4096);
            }));
    };
    add("log", "per-thread append-only log: entry, pwb, pfence, then the count (self-test, correct)", flavour::correct);
    add("log-nt", "the log with NT stores for entries (self-test, correct)", flavour::nt);
    add("buggy-log-no-flush", "entry then count with no pwb+pfence between (seeded bug)", flavour::no_flush);
    add("buggy-log-no-fence", "entry written back but not fenced before the count (seeded bug)", flavour::no_fence);
    add("buggy-log-wrong-line", "writes back the line after the entry's (seeded bug)", flavour::wrong_line);
    add("buggy-log-flag-first", "count committed before the entry is written (seeded bug)", flavour::flag_first);
}

}  // namespace ferrite::crash::selftest
