// crash/selftest/transfer_target.cpp: money moves between two accounts under an undo log; the
// smallest structure whose *recovery* writes, to test crashes during recovery.
//
// Per thread, three lines: account a, account b, and the undo log {old_a, old_b, valid}.
//
//   transfer(x): log = {a, b, valid = 1}; pwb(log); pfence;     // PP: undo record durable
//                a -= x; b += x; pwb(a); pwb(b); pfence;         // PP: new balances durable
//                valid = 0; pwb(log); pfence;                    // LP/PP: commit
//   recover():   if valid: a = old_a; b = old_b; pwb(a); pwb(b); pfence; valid = 0.
//
// Clearing `valid` at the end of recovery needs no write-back: if it is lost, the next
// recovery restores the same old balances again (recovery is idempotent), and the next
// transfer rewrites the log line anyway. (Flush mutation testing confirms this: a pwb there
// survives, i.e. it would be redundant.)
//
//   buggy-transfer-recovery: recovery clears `valid` durably *before* the restored balances
//   are durable. Correct unless recovery itself crashes between the two: only crash
//   injection during recovery can catch it.
//
// Checker, per thread with c returned transfers and p pending: a + b is the initial total,
// and a equals the initial balance minus the first c (or c + p) amounts.
#include <string>

#include "ferrite/pmem/primitives.hpp"
#include "selftest.hpp"

namespace ferrite::crash::selftest {
namespace {

constexpr std::uint64_t initial_balance = std::uint64_t{1} << 40;

struct alignas(64) account {
    std::uint64_t balance;
};
struct alignas(64) undo_log {
    std::uint64_t old_a;
    std::uint64_t old_b;
    std::uint64_t valid FERRITE_FLOW_SENTINEL FERRITE_FLOW_LOG;
};
struct thread_accounts {
    account a;
    account b;
    undo_log log;
};
static_assert(sizeof(thread_accounts) == 192);

std::uint64_t amount(std::uint64_t seed, unsigned tid, std::uint64_t op) {
    return operand(seed, tid, op) % 1000 + 1;
}

class transfer_workload final : public sim::workload {
public:
    transfer_workload(pmem::pool& p, const sim::run_config& c, bool buggy_recovery)
        : config_(c), buggy_recovery_(buggy_recovery), progress_(c.threads) {
        auto* all = accounts_of(p);
        for (unsigned t = 0; t < c.threads; ++t) {
            all[t].a.balance = initial_balance;
            all[t].b.balance = initial_balance;
        }
        pmem::pwb_range(all, c.threads * sizeof(thread_accounts));
        pmem::pfence();
        accounts_ = all;
    }

    void run_thread(unsigned tid) override {
        auto& acc = accounts_[tid];
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            progress_.begin(tid);
            transfer(acc, amount(config_.seed, tid, i));
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    FERRITE_FLOW_ROOT void recover(pmem::pool& image) const override {
        auto* all = accounts_of(image);
        for (unsigned t = 0; t < config_.threads; ++t) {
            auto& acc = all[t];
            if (acc.log.valid == 0) continue;
            if (buggy_recovery_) {
                acc.log.valid = 0;  // BUG: the undo record is dropped before the rollback is durable
                pmem::pwb(&acc.log);
                pmem::pfence();
            }
            acc.a.balance = acc.log.old_a;
            acc.b.balance = acc.log.old_b;
            pmem::pwb(&acc.a);
            pmem::pwb(&acc.b);
            pmem::pfence();  // PP: rollback durable; valid may now be cleared (not flushed, see top)
            acc.log.valid = 0;
        }
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        const auto* all = accounts_of(image);
        for (unsigned t = 0; t < config_.threads; ++t) {
            const auto& acc = all[t];
            const auto& p = at_crash[t];
            const auto who = "thread " + std::to_string(t) + ": ";
            if (acc.a.balance + acc.b.balance != 2 * initial_balance)
                return who + "a + b = " + std::to_string(acc.a.balance + acc.b.balance) +
                       ", money was created or destroyed";
            std::uint64_t expected = initial_balance;
            for (std::uint64_t i = 0; i < p.completed; ++i) expected -= amount(config_.seed, t, i);
            const bool ok = acc.a.balance == expected ||
                            (p.pending && acc.a.balance == expected - amount(config_.seed, t, p.completed));
            if (!ok)
                return who + "balance a = " + std::to_string(acc.a.balance) + " matches neither the " +
                       std::to_string(p.completed) + " returned transfers" +
                       (p.pending ? " nor those plus the pending one" : "");
        }
        return {};
    }

private:
    thread_accounts* accounts_of(pmem::pool& p) const {
        return static_cast<thread_accounts*>(p.root_bytes(config_.threads * sizeof(thread_accounts)));
    }

    FERRITE_FLOW_ROOT static void transfer(thread_accounts& acc, std::uint64_t x) {
        acc.log.old_a = acc.a.balance;
        acc.log.old_b = acc.b.balance;
        acc.log.valid = 1;  // same line as the old values: persists no earlier than they do
        pmem::pwb(&acc.log);
        pmem::pfence();  // PP: undo record durable before the balances change
        acc.a.balance -= x;
        acc.b.balance += x;
        pmem::pwb(&acc.a);
        pmem::pwb(&acc.b);
        pmem::pfence();  // PP: new balances durable before the commit
        acc.log.valid = 0;  // LP
        pmem::pwb(&acc.log);
        pmem::pfence();  // PP: committed when the call returns
    }

    sim::run_config config_;
    bool buggy_recovery_;
    sim::op_progress progress_;
    thread_accounts* accounts_ = nullptr;
};

}  // namespace

void register_transfer_targets(sim::target_registry& r) {
    const auto add = [&](const char* name, const char* summary, bool buggy) {
        r.add(std::make_unique<sim::simple_target>(
            name, summary,
            [buggy](pmem::pool& p, const sim::run_config& c) {
                return std::make_unique<transfer_workload>(p, c, buggy);
            },
            [](const sim::run_config& c) {
                return std::max<std::uint64_t>(64 * 1024, 8192 + c.threads * sizeof(thread_accounts));
            }));
    };
    add("transfer", "two accounts under an undo log; recovery rolls back (self-test, correct)", false);
    add("buggy-transfer-recovery", "recovery drops the undo record before the rollback is durable (seeded bug, needs recovery crashes)", true);
}

}  // namespace ferrite::crash::selftest
