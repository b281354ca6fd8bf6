// A test double for the vector's heap: bump allocation inside a pool's root area, never
// reused; records confirms and deallocations so tests can check the vector's protocol.
#pragma once

#include <cstddef>
#include <new>
#include <set>

#include "ferrite/pmem/pool.hpp"

namespace ferrite_test {

class bump_heap {
public:
    bump_heap(ferrite::pmem::pool& p, std::size_t bytes)
        : next_(static_cast<std::byte*>(p.root_bytes(bytes))), end_(next_ + bytes) {}

    void* allocate(std::size_t bytes) {
        bytes = (bytes + 63) & ~std::size_t{63};
        if (bytes == 0 || static_cast<std::size_t>(end_ - next_) < bytes) throw std::bad_alloc();
        void* p = next_;
        next_ += bytes;
        unconfirmed.insert(p);
        return p;
    }
    void confirm_allocation(void* p) { unconfirmed.erase(p); }
    void deallocate(void* p) { freed.insert(p); }
    void confirm_replacement(void* fresh, void* old) {
        confirm_allocation(fresh);
        deallocate(old);
    }
    void confirm_deallocation(void* p) { confirmed_free.insert(p); }

    std::set<void*> unconfirmed, freed, confirmed_free;

private:
    std::byte* next_;
    std::byte* end_;
};

}  // namespace ferrite_test
