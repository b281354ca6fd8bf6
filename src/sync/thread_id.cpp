// Dense thread ids (see ferrite/sync/thread_id.hpp).
#include "ferrite/sync/thread_id.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "ferrite/error.hpp"

namespace ferrite::sync {
namespace {

std::mutex g_mutex;
std::vector<unsigned> g_free;  // ids given back, reused first
unsigned g_next = 0;
std::atomic<unsigned> g_high_water{0};

struct thread_id_holder {
    unsigned id;
    thread_id_holder() {
        std::lock_guard lock(g_mutex);
        if (!g_free.empty()) {
            id = g_free.back();
            g_free.pop_back();
            return;
        }
        if (g_next == max_thread_ids)
            throw usage_error("more than " + std::to_string(max_thread_ids) +
                              " threads use ferrite's combining structures at once; raise "
                              "ferrite::sync::max_thread_ids");
        id = g_next++;
        g_high_water.store(g_next, std::memory_order_release);
    }
    ~thread_id_holder() {
        std::lock_guard lock(g_mutex);
        g_free.push_back(id);
    }
};

}  // namespace

unsigned this_thread_id() {
    thread_local thread_id_holder holder;
    return holder.id;
}

unsigned thread_id_high_water() noexcept { return g_high_water.load(std::memory_order_acquire); }

namespace detail {
std::uint64_t assign_thread_token() noexcept {
    static std::atomic<std::uint64_t> next{1};  // 2^64 tokens: never wraps
    return thread_token = next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

}  // namespace ferrite::sync
