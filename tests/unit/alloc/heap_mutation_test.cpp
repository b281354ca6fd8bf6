// Seeded random mutation of heap regions, as a fuzzer mutating pool files would: one damaged
// bit, byte or 8-byte word in the heap's metadata (identity, free-list heads, undo log,
// confirm slots, block map) or in a free block's links, then the whole life of the heap:
// open, recover, the client's recovery, finish_recovery, a few allocations and frees, and
// check(). Each step either succeeds or throws heap_error leaving the region byte for byte
// as it was; nothing writes outside the region (guard zones); and no block is ever handed
// out while a client owns any byte of it (the client's blocks are tracked as intervals).
//
// The client's recovery is the protocol's: every block it references that is pending
// allocation is confirmed. A block it references that the heap reports pending
// deallocation it never deallocated: no check inside the heap can tell such a slot from a
// real one, so the client notices and stops (counted apart). A referenced block the heap
// reports free or no block at all the client stops using, but still owns: the heap must
// never hand it out.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "ferrite/error.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/site_registry.hpp"
#include "heap_test_support.hpp"

namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using ferrite::alloc::granule;
using namespace ferrite_test;

constexpr std::uint64_t heap_size = 32 * 1024;
constexpr std::uint64_t guard = 4096;
constexpr int cases_per_image = 3000;

struct block {
    std::uint64_t offset;
    std::uint64_t size;
};

// A heap region as a crash left it, with what its client knew.
struct image {
    std::string name;
    std::vector<std::byte> bytes;
    std::vector<block> held;                 // blocks the client references
    std::vector<std::uint64_t> live, free;   // every live / free block, for mutations
};

std::uint64_t rounded(std::uint64_t bytes) { return std::max<std::uint64_t>(granule, std::bit_ceil(bytes)); }

// Live and free blocks of several orders, two unconfirmed allocations (the client
// references one), one unconfirmed deallocation.
image quiet_image() {
    region mem(heap_size);
    auto h = buddy_heap::create_in(mem.data(), heap_size, {.confirm_slots = 8});
    std::mt19937_64 rng(11);
    std::vector<void*> live;
    for (int i = 0; i < 40; ++i) {
        try {
            void* p = h.allocate(std::uint64_t{64} << rng() % 6);
            h.confirm_allocation(p);
            live.push_back(p);
        } catch (const ferrite::out_of_memory&) {
        }
        if (live.size() > 4 && rng() % 3 == 0) {
            const auto j = rng() % live.size();
            h.deallocate(live[j]);
            h.confirm_deallocation(live[j]);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(j));
        }
    }
    image img{"quiet", {}, {}, {}, {}};
    void* referenced = h.allocate(100);  // pending; the client persisted its reference
    (void)h.allocate(64);                // pending; the client had not: reclaimed
    void* dropped = live.back();         // pending deallocation: the client dropped it
    live.pop_back();
    h.deallocate(dropped);
    live.push_back(referenced);
    for (void* p : live) img.held.push_back({h.offset_of(p), h.block_size(p)});
    for (const auto& b : h.blocks()) (b.state == block_state::free ? img.free : img.live).push_back(b.offset);
    EXPECT_EQ(h.check(), std::vector<std::string>{});
    img.bytes = mem.copy();
    img.bytes.resize(heap_size);
    return img;
}

// `base` with an operation cut by a crash while its undo log is armed (a crash image from
// the simulator, some lines durable and some not): request (allocate) or release
// (confirm_deallocation of the pending deallocation). The client's view is base's.
image armed_image(const image& base, bool release) {
    region mem(heap_size);
    std::vector<std::vector<std::byte>> armed;
    for (std::uint64_t cut = 1; cut < 200; ++cut) {
        std::memcpy(mem.data(), base.bytes.data(), heap_size);
        auto h = buddy_heap::open_in(mem.data(), heap_size);
        h.recover();
        void* victim = nullptr;
        for (const auto& b : h.blocks())
            if (b.state == block_state::deallocation_pending) victim = h.at(b.offset);
        ferrite::sim::site_registry sites;
        std::vector<std::byte> crashed;
        ferrite::sim::session::options opts;
        ferrite::sim::session* self = nullptr;
        opts.at_event = [&](std::uint64_t e) {
            if (e == cut) self->crash_image(cut * 7919, crashed);
        };
        ferrite::sim::session s(mem.data(), heap_size, 1, sites, std::move(opts));
        self = &s;
        {
            ferrite::sim::session::binding bind(&s, 0);
            if (release)
                h.confirm_deallocation(victim);
            else
                (void)h.allocate(1000);
        }
        if (crashed.empty()) break;
        if (const raw_heap raw{crashed.data(), h.geometry()}; raw.tag() != 0) armed.push_back(std::move(crashed));
    }
    EXPECT_GE(armed.size(), 3u) << "crash images with an armed log";
    if (armed.empty()) return base;
    image img = base;
    img.name = release ? "release cut" : "request cut";
    img.bytes = armed[armed.size() / 2];  // some of the operation's changes in it, some not
    return img;
}

class mutation_run {
public:
    explicit mutation_run(const image& img) : img_(img), mem_(heap_size + 2 * guard) {
        base_ = mem_.data() + guard;
        const auto probe = [&] {
            std::memcpy(base_, img.bytes.data(), heap_size);
            return buddy_heap::open_in(base_, heap_size).geometry();
        }();
        g_ = probe;
    }

    // Damages one place at random; returns what it did.
    std::string mutate(std::mt19937_64& rng) {
        const raw_heap raw{base_, g_};
        const auto pick = [&](std::uint64_t lo, std::uint64_t n) { return lo + rng() % n; };
        std::uint64_t at = 0;
        const char* area = "";
        switch (rng() % 16) {
            case 0: area = "identity"; at = pick(0, 64); break;
            case 1: case 2: case 3:
                area = "heads";
                at = raw.offset_of(raw.head(static_cast<unsigned>(rng() % 4 ? pick(6, g_.max_order - 5) : rng() % 64))) + rng() % 8;
                break;
            case 4: area = "log tag"; at = g_.log_offset + rng() % 8; break;
            case 5: case 6:
                area = "log entries";
                at = raw.offset_of(raw.entry(rng() % 2, rng() % 12).offset) + rng() % 16;
                break;
            case 7: case 8: area = "slots"; at = pick(g_.slots_offset, 8 * g_.slot_count); break;
            case 9: case 10: case 11: area = "map"; at = pick(g_.map_offset, g_.arena_size / granule); break;
            default: area = "free block links"; at = img_.free[rng() % img_.free.size()] + rng() % 16; break;
        }
        char what[160];
        switch (rng() % 4) {
            case 0: {
                const auto bit = rng() % 8;
                base_[at] ^= static_cast<std::byte>(1u << bit);
                std::snprintf(what, sizeof what, "%s: bit %llu of byte %llu flipped", area,
                              static_cast<unsigned long long>(bit), static_cast<unsigned long long>(at));
                break;
            }
            case 1: {
                const auto v = static_cast<std::uint8_t>(area[0] == 'm' ? special_tag(rng) : rng());
                base_[at] = static_cast<std::byte>(v);
                std::snprintf(what, sizeof what, "%s: byte %llu := 0x%x", area, static_cast<unsigned long long>(at), v);
                break;
            }
            default: {
                at &= ~std::uint64_t{7};
                const auto v = special_word(rng);
                std::memcpy(base_ + at, &v, 8);
                std::snprintf(what, sizeof what, "%s: word %llu := 0x%llx", area, static_cast<unsigned long long>(at),
                              static_cast<unsigned long long>(v));
                break;
            }
        }
        return what;
    }

    struct tally {
        std::map<std::string, int> rejected;  // heap_error, by step
        int client_noticed = 0, lost = 0, completed = 0, handed_out = 0;
    };

    // One case: the region is img's, damaged once. Failures are reported with `what`.
    void run(std::mt19937_64& rng, const std::string& what, tally& t) {
        std::vector<block> owned = img_.held;   // every byte a client owns
        std::vector<block> usable = img_.held;  // what the client still operates on
        std::vector<std::byte> before(heap_size);
        std::string failed_step;
        // One heap call: true if it succeeded (or the heap is full); false after heap_error,
        // which must leave every byte as it was.
        const auto step = [&](const char* name, auto&& f) {
            std::memcpy(before.data(), base_, heap_size);
            try {
                f();
                return true;
            } catch (const ferrite::heap_error& e) {
                EXPECT_EQ(std::memcmp(before.data(), base_, heap_size), 0)
                    << what << ": " << name << " threw heap_error but changed the region: " << e.what();
                EXPECT_NE(std::string(e.what()).find("restore the pool from a copy"), std::string::npos) << e.what();
                ++t.rejected[name];
                return false;
            } catch (const ferrite::out_of_memory&) {
                return true;
            } catch (const ferrite::confirm_table_full&) {
                return true;
            } catch (const std::exception& e) {
                ADD_FAILURE() << what << ": " << name << " threw " << e.what();
                return false;
            }
        };
        std::unique_ptr<buddy_heap> h;
        const auto finish = [&] {
            if (h) {
                (void)h->check();  // ends, and reads only validated offsets, on any bytes
                (void)h->usage();
                (void)h->blocks();
            }
            check_guards(what);
        };
        if (!step("open", [&] { h.reset(new buddy_heap(buddy_heap::open_in(base_, heap_size))); })) return finish();
        if (!step("recover", [&] { h->recover(); })) return finish();
        for (std::size_t i = 0; i < usable.size();) {
            void* p = h->at(usable[i].offset);
            block_state st{};
            if (!step("state", [&] { st = h->state(p); })) return finish();
            if (st == block_state::deallocation_pending) {
                ++t.client_noticed;  // never deallocated by this client: it stops here
                return finish();
            }
            if (st == block_state::free || st == block_state::not_a_block) {
                ++t.lost;  // no longer used, still owned
                usable.erase(usable.begin() + static_cast<std::ptrdiff_t>(i));
                continue;
            }
            if (st == block_state::allocation_pending && !step("confirm_allocation", [&] { h->confirm_allocation(p); }))
                return finish();
            ++i;
        }
        if (!step("finish_recovery", [&] { h->finish_recovery(); })) return finish();
        for (int op = 0; op < 6; ++op) {
            if (rng() % 3 != 0 || usable.empty()) {
                const auto bytes = std::uint64_t{40} << rng() % 7;
                void* p = nullptr;
                if (!step("allocate", [&] { p = h->allocate(bytes); })) return finish();
                if (!p) continue;  // full
                ++t.handed_out;
                const auto off = h->offset_of(p);
                const block b{off, rounded(bytes)};
                ASSERT_TRUE(off >= g_.arena_offset && off % granule == 0 && off + b.size <= g_.arena_offset + g_.arena_size)
                    << what << ": allocate returned offset " << off << ", outside the arena";
                for (const auto& o : owned)
                    ASSERT_FALSE(b.offset < o.offset + o.size && o.offset < b.offset + b.size)
                        << what << ": allocate handed out [" << b.offset << ", +" << b.size
                        << "), which overlaps the client's block [" << o.offset << ", +" << o.size << ")";
                owned.push_back(b);
                usable.push_back(b);
                if (!step("confirm_allocation", [&] { h->confirm_allocation(p); })) return finish();
            } else {
                const auto j = rng() % usable.size();
                void* p = h->at(usable[j].offset);
                if (!step("deallocate", [&] { h->deallocate(p); })) return finish();
                if (!step("confirm_deallocation", [&] { h->confirm_deallocation(p); })) return finish();
                const auto gone = usable[j].offset;
                usable.erase(usable.begin() + static_cast<std::ptrdiff_t>(j));
                std::erase_if(owned, [&](const block& o) { return o.offset == gone; });
            }
        }
        ++t.completed;
        finish();
    }

    void reset() {
        std::memset(mem_.data(), 0xa5, guard);
        std::memset(base_ + heap_size, 0xa5, guard);
        std::memcpy(base_, img_.bytes.data(), heap_size);
    }

private:
    std::uint64_t special_word(std::mt19937_64& rng) const {
        const auto any = [&](const std::vector<std::uint64_t>& v) { return v.empty() ? 0 : v[rng() % v.size()]; };
        switch (rng() % 16) {
            case 0: return 0;
            case 1: return ~std::uint64_t{0};
            case 2: return std::uint64_t{1} << 63;
            case 3: return heap_size;
            case 4: return heap_size - 8 + rng() % 2 * 8;
            case 5: return g_.arena_offset;
            case 6: return g_.arena_offset + rng() % (g_.arena_size / granule) * granule;
            case 7: case 8: return any(img_.live) | rng() % 4;   // a live block (as a slot: any kind)
            case 9: case 10: return any(img_.free) | rng() % 3;  // a free block
            case 11: return any(img_.live) + granule;            // inside a live block
            case 12: return g_.log_offset + rng() % 4 * 64;
            case 13: return g_.slots_offset;
            case 14: return g_.map_offset + rng() % 64;
            default: return rng();
        }
    }
    static std::uint8_t special_tag(std::mt19937_64& rng) {
        const auto k = static_cast<std::uint8_t>(rng() % 4 ? 6 + rng() % 10 : rng() % 64);
        switch (rng() % 4) {
            case 0: return static_cast<std::uint8_t>(ferrite::alloc::free_tag | k);
            case 1: return static_cast<std::uint8_t>(ferrite::alloc::live_tag | k);
            case 2: return 0;
            default: return static_cast<std::uint8_t>(rng());
        }
    }
    void check_guards(const std::string& what) const {
        for (std::uint64_t i = 0; i < guard; ++i)
            if (mem_.data()[i] != std::byte{0xa5} || base_[heap_size + i] != std::byte{0xa5}) {
                ADD_FAILURE() << what << ": a byte outside the heap's region changed";
                return;
            }
    }

    const image& img_;
    region mem_;
    std::byte* base_ = nullptr;
    ferrite::alloc::heap_geometry g_{};
};

TEST(HeapMutation, OneDamagedPlaceNeverCrashesWritesOutsideOrHandsAnOwnedBlockOut) {
    const auto quiet = quiet_image();
    const std::vector<image> images{quiet, armed_image(quiet, false), armed_image(quiet, true)};
    std::mt19937_64 rng(20240611);
    int total = 0;
    for (const auto& img : images) {
        mutation_run run(img);
        mutation_run::tally t;
        for (int c = 0; c < cases_per_image; ++c) {
            run.reset();
            const auto what = img.name + " case " + std::to_string(c) + ", " + run.mutate(rng);
            run.run(rng, what, t);
            ++total;
            if (::testing::Test::HasFatalFailure()) return;
        }
        int rejected = 0;
        std::string by_step;
        for (const auto& [step, n] : t.rejected) {
            rejected += n;
            by_step += " " + step + " " + std::to_string(n);
        }
        std::printf("%s: %d cases: %d heap_error (%s ), %d noticed by the client, %d completed "
                    "(%d blocks handed out), %d referenced blocks lost\n",
                    img.name.c_str(), cases_per_image, rejected, by_step.c_str(), t.client_noticed, t.completed,
                    t.handed_out, t.lost);
        EXPECT_GT(t.rejected["open"], 0) << img.name;
        EXPECT_GT(t.rejected["allocate"] + t.rejected["confirm_deallocation"] + t.rejected["finish_recovery"], 0)
            << img.name << ": no damage reached a hand-out or a release";
        EXPECT_GT(t.completed, cases_per_image / 4) << img.name;
    }
    EXPECT_EQ(total, 3 * cases_per_image);
}

// The undamaged images themselves run clean.
TEST(HeapMutation, UndamagedImagesCompleteWithoutErrors) {
    const auto quiet = quiet_image();
    for (const auto& img : {quiet, armed_image(quiet, false), armed_image(quiet, true)}) {
        mutation_run run(img);
        mutation_run::tally t;
        std::mt19937_64 rng(5);
        for (int c = 0; c < 20; ++c) {
            run.reset();
            run.run(rng, img.name + " undamaged", t);
        }
        EXPECT_TRUE(t.rejected.empty()) << img.name;
        EXPECT_EQ(t.completed, 20) << img.name;
        EXPECT_EQ(t.client_noticed + t.lost, 0) << img.name;
    }
}

}  // namespace
