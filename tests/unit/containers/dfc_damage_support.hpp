// Helpers for the DFC damage tests: a structure that grew into a buddy heap, its region a
// block of that heap (as the catalog makes it), all in one piece of plain memory that a test
// can copy, damage word by word and compare; and the check that a damaged region is refused
// by validate(), by open() and by open() after a restart, each with damaged_pool of kind
// damaged_object, region the kind's name, and every byte unchanged.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../alloc/heap_test_support.hpp"
#include "dfc_test_support.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/error.hpp"

namespace ferrite_test {

// Push and pop for each DFC container (the deque at both ends, by the value's parity).
struct dfc_ops {
    template <class T>
    static bool push(ferrite::dfc_stack<T>& s, unsigned t, T v) { return s.push(t, v); }
    template <class T>
    static std::optional<T> pop(ferrite::dfc_stack<T>& s, unsigned t) { return s.pop(t); }
    template <class T>
    static bool push(ferrite::dfc_queue<T>& q, unsigned t, T v) { return q.enqueue(t, v); }
    template <class T>
    static std::optional<T> pop(ferrite::dfc_queue<T>& q, unsigned t) { return q.dequeue(t); }
    template <class T>
    static bool push(ferrite::dfc_deque<T>& d, unsigned t, T v) { return v % 2 ? d.push_front(t, v) : d.push_back(t, v); }
    template <class T>
    static std::optional<T> pop(ferrite::dfc_deque<T>& d, unsigned t) { return t % 2 ? d.pop_front(t) : d.pop_back(t); }
};

// A container C of 3 thread ids whose region (5 nodes) is a block of a heap that its node
// pool grew into (chunks of 4, 8, 16 nodes), holding 20 values, with a pending announcement
// of thread 2 (durable, never collected) for recovery to execute.
template <class C>
struct grown_dfc {
    static constexpr unsigned threads = 3;
    using structure = typename C::structure;
    region memory;
    std::unique_ptr<ferrite::alloc::buddy_heap> heap;  // immovable
    void* base = nullptr;  // the region
    std::size_t bytes = 0;

    std::uint64_t first_growth = 4;

    explicit grown_dfc(std::uint64_t values = 20, std::uint64_t first_growth_nodes = 4, std::size_t heap_bytes = 256 << 10)
        : memory(heap_bytes), first_growth(first_growth_nodes) {
        heap.reset(new ferrite::alloc::buddy_heap(ferrite::alloc::buddy_heap::create_in(memory.data(), memory.size())));
        bytes = C::required_bytes(threads, 4);
        base = heap->allocate(bytes);
        heap->confirm_allocation(base);
        bytes = heap->block_size(base);
        auto c = C::create(base, bytes, threads, options());
        for (std::uint64_t i = 0; i < values; ++i) EXPECT_TRUE(dfc_ops::push(c, static_cast<unsigned>(i % threads), i));
        for (unsigned t = 0; t < 2; ++t) EXPECT_TRUE(dfc_ops::pop(c, t));
        announce_raw(layout(), 2, 2, 0);  // op 2 is a pop in every kind
    }
    ferrite::combining::dfc_options options() {
        ferrite::combining::dfc_options o;
        o.grow_from = &*heap;
        o.first_growth_nodes = first_growth;
        return o;
    }
    ferrite::combining::dfc_region layout() { return ferrite::combining::dfc_region::at(base, threads); }
    std::vector<std::byte> image() const { return memory.copy(); }
    void restore(const std::vector<std::byte>& image) {
        std::memcpy(memory.data(), image.data(), image.size());
        heap.reset(new ferrite::alloc::buddy_heap(ferrite::alloc::buddy_heap::open_in(memory.data(), memory.size())));
        heap->recover();
        heap->finish_recovery();
    }
    // The heap offset of chunk k's block (k >= 1).
    std::uint64_t chunk_offset(unsigned k) { return layout().chunks->offset[k - 1]; }
    unsigned chunks() {
        unsigned k = 1;
        while (k < ferrite::combining::dfc_max_chunks && chunk_offset(k) != 0) ++k;
        return k;
    }
    // Node n (chunk << 32 | index) as the media hold it.
    ferrite::combining::dfc_node& node(std::uint64_t n) {
        const auto k = static_cast<unsigned>(n >> 32);
        auto* first = k == 0 ? layout().nodes + 1 : static_cast<ferrite::combining::dfc_node*>(heap->at(chunk_offset(k)));
        return first[(n & 0xffffffffu) - 1];
    }
    // The active root copy (cEpoch rounded up, as recovery reads it).
    ferrite::combining::dfc_roots& active_roots() {
        auto r = layout();
        const std::uint64_t c = r.epoch->epoch.load() + (r.epoch->epoch.load() & 1);
        return r.roots[(c / 2) % 2];
    }
    // The nodes from root 0 along `next`, up to the tail (root 1) for a queue or a deque.
    std::vector<std::uint64_t> list() {
        std::vector<std::uint64_t> out;
        const std::uint64_t last = structure::root_count == 2 ? active_roots().node[1].load() : 0;
        for (std::uint64_t n = active_roots().node[0].load(); n != 0; n = node(n).next) {
            out.push_back(n);
            if (n == last) break;
        }
        return out;
    }
};

// `f` throws damaged_pool of kind damaged_object for `kind`'s region, object "".
// `needle`, if given, is part of the message (the check that was meant caught it).
template <class F>
void expect_damaged_by(F&& f, std::string_view kind, const std::string& what, const char* path,
                       const char* needle = nullptr) {
    try {
        f();
        ADD_FAILURE() << what << ": " << path << " accepted the damaged region";
    } catch (const ferrite::damaged_pool& e) {
        if (std::getenv("FERRITE_TEST_PRINT_DAMAGE")) std::printf("%s: %s\n", what.c_str(), e.what());
        if (needle) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << what << " (" << path << "): " << e.what();
        }
        EXPECT_EQ(e.kind(), ferrite::pool_errc::damaged_object) << what << " (" << path << "): " << e.what();
        EXPECT_EQ(e.region(), kind) << what << " (" << path << "): " << e.what();
        EXPECT_EQ(e.object(), "") << what << " (" << path << ")";
    } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": " << path << " threw something other than damaged_pool: " << e.what();
    }
}

// The damaged region is refused by validate() (a read-only heap), by open() (with the
// running heap) and by open() after a restart (heap.recover() first, as every heap client
// is opened), and nothing of the region or the heap changes.
template <class C>
void expect_refused(grown_dfc<C>& g, const std::string& what, const char* needle = nullptr) {
    const auto kind = C::structure::kind_name;
    const auto before = g.image();
    {
        auto ro = ferrite::alloc::buddy_heap::open_in(g.memory.data(), g.memory.size(), /*read_only=*/true);
        expect_damaged_by([&] { C::validate(g.base, g.bytes, &ro); }, kind, what, "validate()", needle);
    }
    expect_damaged_by([&] { (void)C::open(g.base, g.bytes, g.options()); }, kind, what, "open()", needle);
    EXPECT_TRUE(before == g.image()) << what << ": a failed open() wrote to the pool";
    auto restarted = ferrite::alloc::buddy_heap::open_in(g.memory.data(), g.memory.size());
    restarted.recover();
    const auto recovering = g.image();
    auto o = g.options();
    o.grow_from = &restarted;
    expect_damaged_by([&] { (void)C::open(g.base, g.bytes, o); }, kind, what, "recovery after a restart", needle);
    EXPECT_TRUE(recovering == g.image()) << what << ": a failed recovery wrote to the pool";
}

}  // namespace ferrite_test
