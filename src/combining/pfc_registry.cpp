// Per-thread publication lookup for PFC (see ferrite/combining/pfc_registry.hpp).
#include "ferrite/combining/pfc_registry.hpp"

#include <unordered_map>

namespace ferrite::combining {
namespace {

std::atomic<std::uint64_t> g_next_instance{1};

struct thread_nodes {
    std::unordered_map<std::uint64_t, pfc_node_base*> by_instance;
    std::uint64_t last_instance = 0;  // one-entry cache: the common case is one instance
    pfc_node_base* last_node = nullptr;

    ~thread_nodes() {
        for (auto& [id, node] : by_instance) {
            node->abandoned.store(true, std::memory_order_release);
            node->release();
        }
    }
};

thread_nodes& mine() {
    thread_local thread_nodes nodes;
    return nodes;
}

}  // namespace

std::uint64_t next_pfc_instance_id() noexcept {
    return g_next_instance.fetch_add(1, std::memory_order_relaxed);
}

pfc_node_base* find_thread_node(std::uint64_t instance) noexcept {
    auto& m = mine();
    if (m.last_instance == instance) return m.last_node;
    auto it = m.by_instance.find(instance);
    if (it == m.by_instance.end()) return nullptr;
    m.last_instance = instance;
    m.last_node = it->second;
    return it->second;
}

void add_thread_node(std::uint64_t instance, pfc_node_base* node) {
    auto& m = mine();
    std::erase_if(m.by_instance, [](auto& entry) {
        if (!entry.second->orphaned.load(std::memory_order_acquire)) return false;
        entry.second->release();
        return true;
    });
    m.by_instance.emplace(instance, node);
    m.last_instance = instance;
    m.last_node = node;
}

}  // namespace ferrite::combining
