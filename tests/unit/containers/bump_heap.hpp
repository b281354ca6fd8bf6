// A test double for the vector's heap: bump allocation inside a pool's root area, never
// reused; records confirms and deallocations so tests can check the vector's protocol,
// answers state() / block_size() as the buddy heap does (the containers validate with them),
// and fails the next allocation on demand (fail_next: failure injection).
#pragma once

#include <cstddef>
#include <exception>
#include <map>
#include <new>
#include <set>
#include <utility>

#include "ferrite/alloc/heap_stats.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite_test {

class bump_heap {
public:
    bump_heap(ferrite::pmem::pool& p, std::size_t bytes)
        : next_(static_cast<std::byte*>(p.root_bytes(bytes))), end_(next_ + bytes) {}

    void* allocate(std::size_t bytes) {
        if (fail_next) std::rethrow_exception(std::exchange(fail_next, nullptr));  // injected once
        bytes = (bytes + 63) & ~std::size_t{63};
        if (bytes == 0 || static_cast<std::size_t>(end_ - next_) < bytes) throw std::bad_alloc();
        void* p = next_;
        next_ += bytes;
        unconfirmed.insert(p);
        sizes_[p] = bytes;
        return p;
    }
    void confirm_allocation(void* p) { unconfirmed.erase(p); }
    void deallocate(void* p) { freed.insert(p); }
    void confirm_replacement(void* fresh, void* old) {
        confirm_allocation(fresh);
        deallocate(old);
    }
    void confirm_deallocation(void* p) { confirmed_free.insert(p); }

    ferrite::alloc::block_state state(const void* p) const {
        using ferrite::alloc::block_state;
        auto* q = const_cast<void*>(p);
        if (!sizes_.contains(q)) return block_state::not_a_block;
        if (confirmed_free.contains(q)) return block_state::free;
        if (freed.contains(q)) return block_state::deallocation_pending;
        return unconfirmed.contains(q) ? block_state::allocation_pending : block_state::live;
    }
    std::size_t block_size(const void* p) const {
        const auto it = sizes_.find(const_cast<void*>(p));
        return it == sizes_.end() || confirmed_free.contains(it->first) ? 0 : it->second;
    }

    std::set<void*> unconfirmed, freed, confirmed_free;
    std::exception_ptr fail_next;  // the next allocate throws this (failure injection)

private:
    std::map<void*, std::size_t> sizes_;  // every block handed out, with its usable bytes
    std::byte* next_;
    std::byte* end_;
};

}  // namespace ferrite_test
