// DFC thread-id claims: the slow paths and the thread-exit release
// (see ferrite/combining/dfc_tid_claims.hpp).
#include "ferrite/combining/dfc_tid_claims.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/error.hpp"

namespace ferrite::combining {
namespace {

// The ids this thread claimed, released when it exits. Weak: an engine may be gone by then.
struct held_claims {
    std::vector<std::pair<std::weak_ptr<dfc_tid_claims>, unsigned>> held;
    ~held_claims() {
        const std::uint64_t me = sync::this_thread_token();
        for (auto& [claims, tid] : held)
            if (auto c = claims.lock()) c->release_if_held_by(tid, me);
    }
    // Drop the entries of engines that are gone, and (claims, tid) if given.
    void forget(const dfc_tid_claims* claims = nullptr, unsigned tid = 0) noexcept {
        std::erase_if(held, [&](const auto& h) {
            const auto c = h.first.lock();
            return !c || (c.get() == claims && h.second == tid);
        });
    }
};

held_claims& this_thread_claims() {
    thread_local held_claims claims;
    return claims;
}

std::string holder_text(unsigned tid) { return "thread id " + std::to_string(tid); }

}  // namespace

std::shared_ptr<dfc_tid_claims> dfc_tid_claims::make(unsigned threads, std::string_view kind) {
    return std::make_shared<dfc_tid_claims>(threads, kind);
}

dfc_tid_claims::dfc_tid_claims(unsigned threads, std::string_view kind)
    : owner_(std::make_unique<std::atomic<std::uint64_t>[]>(threads)), kind_(kind) {
    for (unsigned t = 0; t < threads; ++t) owner_[t].store(0, std::memory_order_relaxed);
}

void dfc_tid_claims::claim_slow(unsigned tid) {
    const std::uint64_t me = sync::this_thread_token();
    auto& mine = this_thread_claims();
    // Noted before the CAS: a claim the list cannot hold (bad_alloc) is never made.
    mine.forget();
    mine.held.emplace_back(weak_from_this(), tid);
    std::uint64_t expected = 0;
    if (owner_[tid].compare_exchange_strong(expected, me, std::memory_order_acquire, std::memory_order_relaxed))
        return;
    mine.held.pop_back();
    throw usage_error(std::string(kind_) + ": " + holder_text(tid) +
                      " is in use by another thread. A thread id is used by one thread at a time (two threads "
                      "announcing as one id overwrite each other's announcements and lose operations): give "
                      "every thread its own id, or let the thread that holds " + holder_text(tid) +
                      " call release(" + std::to_string(tid) + ") when it is done with it (a thread's ids "
                      "are also released when it exits). Nothing was done.");
}

void dfc_tid_claims::release(unsigned tid) {
    const std::uint64_t me = sync::this_thread_token();
    std::uint64_t expected = me;
    if (owner_[tid].compare_exchange_strong(expected, 0, std::memory_order_release, std::memory_order_relaxed)) {
        this_thread_claims().forget(this, tid);
        return;
    }
    if (expected == 0) return;  // free: nothing to give back
    throw usage_error(std::string(kind_) + ": release(" + std::to_string(tid) + "): " + holder_text(tid) +
                      " is held by another thread, which may be inside an operation; only the thread "
                      "holding an id releases it (it is released when that thread exits, too)");
}

void dfc_tid_claims::release_if_held_by(unsigned tid, std::uint64_t token) noexcept {
    std::uint64_t expected = token;
    owner_[tid].compare_exchange_strong(expected, 0, std::memory_order_release, std::memory_order_relaxed);
}

}  // namespace ferrite::combining
