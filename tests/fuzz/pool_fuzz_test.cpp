// Pool-file fuzzing (issue 16, "no damaged byte crashes the library"): seeded mutations of
// whole pool files holding every kind of named object, each opened as a program would.
//
// Images (pool_image.hpp): a store with three vectors (u64, f64, a tagged struct), a DFC
// stack, queue and deque, PFC ones, a SOFT durable_map and a link-free durable_set, an
// ordered_map (the InCLL tree: its nodes are validated lazily, so a damaged node may be a
// damaged_pool from the operation that reaches it rather than from store::open) and a
// fragmented heap, as a clean file, as a file copied while
// open, and as crash-simulator images taken inside operations.
//
// A case: pick an image, a region of it (header identity, state line or roots table, heap header, undo
// log, confirm slots, block map, free links, catalog blocks, each object's header or data,
// a durable set's header block, area headers or node slots, or the file as a whole) and a mutation kind: a bit flip, a random byte, a special 8-byte
// (or 4-byte) word (0, 1, ~0, 2^32, 2^58, 2^63, the pool size, near the data top, the old
// value +-1, roots entries naming the heap as the catalog or the data top as the heap), an in-pool offset (other blocks, objects, node numbers, +-64), truncation or
// extension; one to three mutations in the region. The mutated file is then put through,
// in a forked worker process (so that a signal, a sanitizer report or a hang is caught and
// reported with the case, and the run goes on with a fresh worker):
//   1. the logic of `ferrite pool check` (cli::pool_check_json, linked in) on the file read
//      only: its verdict is remembered; the file must be unchanged;
//   2. ferrite::store::open (rehearsed recovery, then the real one), every named object
//      opened by its type, one operation each (a push, or a pop on odd cases; the durable
//      sets a scan, then an upsert or insert, or an erase), close;
//   3. either a ferrite::error came out of the open, and then the file is byte-identical
//      and the check did not call it consistent; or it succeeded, and then the heap check
//      and the pool check of the result are clean. An object open may still refuse a
//      type_mismatch or unknown_kind (the entry's type or kind itself was mutated: read
//      correctly, just not what was asked for). Anything else (another exception, a signal,
//      a sanitizer report, a case running past the time limit) is a failure.
// Outcomes are counted per region and kind (refused / opened / pool check consistent) and
// printed; the test fails on any failure outside DFC regions, and if a metadata region never
// got a single refusal (the mutations would be missing what they aim at).
//
// ferrite-kv's pools (apps/kv; pool_image.hpp, build_kv_images): a soft and a cpnvm engine's
// pool, clean and as kill -9 leaves it, with the same mutations in their own regions (the kv
// root, the item heap, the items; the program image's header, epochs, roots, allocator and
// free blocks, the table, the buckets, the items). Each case: the pool check (it must not
// crash or write; its verdict is reported only, since the engines validate more than the
// store), then the engine's public open; it refuses with a ferrite::error or usage_error with
// the file byte-identical, or it opens, every known key is read back (get, value copied), the
// engine's stats, one write (a delete, or a set) and a gat, close; then the engine's
// check_items() and a second open are clean. FERRITE_FUZZ_KV_CASES (default 300) per engine.
//
// DFC regions: failures in DFC regions are listed and counted apart; they fail the test
// (the DFC validation, combining/dfc_validation.hpp, has landed) unless
// FERRITE_FUZZ_DFC_STRICT=0.
//
// Environment: FERRITE_FUZZ_SEED (a number, default 16, or "random"), FERRITE_FUZZ_CASES
// (default 3000: about 30 s under ASan+UBSan on 2 cores), FERRITE_FUZZ_TIMEOUT (seconds per
// case, default 20), FERRITE_FUZZ_DFC_STRICT (default 1), FERRITE_FUZZ_VERBOSE=1 (one line per case),
// FERRITE_FUZZ_FORK=0 (cases in the test's own process: for a debugger). A failure prints
// the seed and the case number; FERRITE_FUZZ_SEED=<seed> FERRITE_FUZZ_ONLY=<case> reruns
// that one case (the images are rebuilt the same way from the seed, UUID and time aside).
//
// Why whole files and a real open, not the unit fuzzers of each layer (heap_mutation_test,
// vector_damage_test, deque_damage_test): the layers' validators are only as good as their
// composition, and the promise is about files: what store::open, the catalog and
// pool check do together with one damaged byte, wherever it lies.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/error.hpp"
#include "ferrite/sim/rng.hpp"
#include "pool_check.hpp"
#include "pool_image.hpp"
#include "cpnvm_engine.hpp"
#include "soft_engine.hpp"

namespace {

using u64 = std::uint64_t;
namespace fs = std::filesystem;
using namespace ferrite_fuzz;

// ---- configuration ------------------------------------------------------------------------

u64 env_number(const char* name, u64 fallback) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    return std::strtoull(v, nullptr, 0);
}

u64 run_seed() {
    const char* v = std::getenv("FERRITE_FUZZ_SEED");
    if (v != nullptr && std::string(v) == "random")
        return static_cast<u64>(std::chrono::steady_clock::now().time_since_epoch().count());
    return env_number("FERRITE_FUZZ_SEED", 16);
}

// ---- mutations ------------------------------------------------------------------------------

enum class kind { bit_flip, byte, special, offset, truncate, extend };
constexpr const char* kind_names[] = {"bit flip", "byte", "special word", "in-pool offset", "truncation", "extension"};

struct mutation {
    std::size_t region = 0;
    kind what = kind::bit_flip;
    std::string description;  // every change, with its file offset
    std::string bytes;        // the mutated file (reused from case to case: a forked child
                              // copies the page tables of everything the parent holds)
};

std::string hex(u64 v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

u64 special_word(const image& im, u64 old, ferrite::sim::rng& r) {
    const u64 size = im.bytes.size();
    const u64 values[] = {0,
                          1,
                          ~u64{0},
                          u64{1} << 32,
                          u64{1} << 58,
                          u64{1} << 63,
                          size,
                          size - 64,
                          size + 64,
                          im.data_top,
                          im.data_top - 8,
                          im.data_top - 64,
                          im.data_top + 64,
                          im.heap_offset,
                          ferrite::pmem::root_entry(ferrite::pmem::root_ids::catalog, im.heap_offset),
                          ferrite::pmem::root_entry(ferrite::pmem::root_ids::heap, im.data_top),
                          old + 1,
                          old - 1,
                          old ^ (u64{1} << 63),
                          0xffffffffull};
    return values[r.below(std::size(values))];
}

// Picks a region of `im` and mutates it into `m`.
void mutate(const image& im, ferrite::sim::rng& r, mutation& m) {
    m.region = static_cast<std::size_t>(r.below(im.regions.size()));
    const auto& reg = im.regions[m.region];
    m.bytes = im.bytes;
    std::ostringstream d;
    if (reg.of == owner::file) {
        m.what = r.chance(0.5) ? kind::truncate : kind::extend;
        if (m.what == kind::truncate) {
            // Anywhere, or exactly where a region starts (cutting it off).
            u64 at = r.below(m.bytes.size());
            if (r.chance(0.5)) {
                const auto& other = im.regions[r.below(im.regions.size())];
                at = other.ranges.empty() ? at : other.ranges[r.below(other.ranges.size())].offset;
            }
            m.bytes.resize(at);
            d << "truncated to " << at << " bytes";
        } else {
            const u64 n = r.chance(0.5) ? 1 + r.below(64) : 4096 * (1 + r.below(4));
            const bool random = r.chance(0.5);
            for (u64 i = 0; i < n; ++i) m.bytes.push_back(random ? static_cast<char>(r.next()) : '\0');
            d << "extended by " << n << (random ? " random" : " zero") << " bytes";
        }
        m.description = d.str();
        return;
    }
    m.what = static_cast<kind>(r.below(4));
    const unsigned count = r.chance(0.7) ? 1 : 2 + static_cast<unsigned>(r.below(2));
    for (unsigned c = 0; c < count; ++c) {
        const auto& range = reg.ranges[r.below(reg.ranges.size())];
        u64 at = range.offset + r.below(std::max<u64>(range.size, 1));
        if (at >= m.bytes.size()) continue;
        if (c != 0) d << "; ";
        switch (m.what) {
            case kind::bit_flip: {
                const unsigned bit = static_cast<unsigned>(r.below(8));
                m.bytes[at] = static_cast<char>(m.bytes[at] ^ (1 << bit));
                d << "bit " << bit << " of byte " << at;
                break;
            }
            case kind::byte: {
                const auto v = static_cast<unsigned char>(r.next());
                d << "byte " << at << ": " << hex(static_cast<unsigned char>(m.bytes[at])) << " -> " << hex(v);
                m.bytes[at] = static_cast<char>(v);
                break;
            }
            case kind::special:
            case kind::offset: {
                const bool half = m.what == kind::special && r.chance(0.25);  // a 32-bit field
                const u64 width = half ? 4 : 8;
                at = std::max(range.offset, at & ~(width - 1));
                if (at + width > m.bytes.size()) continue;
                u64 old = 0;
                std::memcpy(&old, m.bytes.data() + at, width);
                const u64 v = m.what == kind::special ? special_word(im, old, r) : im.offsets[r.below(im.offsets.size())];
                std::memcpy(m.bytes.data() + at, &v, width);
                d << (half ? "u32 at " : "word at ") << at << ": " << hex(old) << " -> " << hex(half ? v & 0xffffffffu : v);
                break;
            }
            default: break;
        }
    }
    m.description = d.str();
}

// ---- one case (in the child) --------------------------------------------------------------

// The whole file in one read (an istreambuf_iterator loop took 40% of a case under ASan).
std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary | std::ios::ate);
    std::string out(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)), '\0');
    in.seekg(0);
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    return out;
}

void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct case_result {
    bool consistent = false;  // what the pool check said of the mutated file
    bool opened = false;      // store::open succeeded
    bool finished = false;    // the child reported (no signal, no hang)
    std::string check_problem, refusal;
    std::vector<std::string> violations;
};

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\t') c = ' ';
    return s;
}

// The pool check's verdict of the file at `path`, as `ferrite pool check` gives it.
bool check_consistent(const fs::path& path, std::string& problem, std::vector<std::string>& violations) {
    try {
        auto p = ferrite::pmem::pool::inspect(path);
        const auto j = ferrite::cli::pool_check_json(p);
        if (j["consistent"].get<bool>()) return true;
        problem = j["problems"].empty() ? "" : j["problems"][0].get<std::string>();
        return false;
    } catch (const ferrite::error& e) {
        problem = e.what();
    } catch (const std::exception& e) {
        violations.push_back(std::string("pool check threw a non-ferrite exception: ") + e.what());
    }
    return false;
}

// As the images were made: a DFC structure created anew (its entry's name was damaged) is as
// small as the originals, with small node chunks.
ferrite::combining::dfc_options small_growth() {
    ferrite::combining::dfc_options o;
    o.first_growth_nodes = 16;
    return o;
}

// A ferrite::error from opening a named object after the store opened: only a kind or
// element type read correctly but not the one asked for.
template <class F>
void open_and_use(const char* name, std::vector<std::string>& violations, F&& f) {
    try {
        f();
    } catch (const ferrite::pool_error& e) {
        if (e.kind() != ferrite::pool_errc::type_mismatch && e.kind() != ferrite::pool_errc::unknown_kind)
            violations.push_back(std::string("opening '") + name + "' after a successful store::open threw " +
                                 std::string(ferrite::to_string(e.kind())) + ": " + e.what());
    } catch (const ferrite::out_of_memory&) {
        // A name whose entry was damaged is no longer found: opening it creates it anew, and
        // the heap may have no room. (A std::bad_alloc by design, not damage.)
    } catch (const std::exception& e) {
        violations.push_back(std::string("opening or using '") + name + "' threw a non-ferrite_error: " + e.what());
    }
}

case_result run_kv_case(const fs::path& path, const std::string& bytes, bool pop, family which);

case_result run_case(const fs::path& path, const std::string& bytes, bool pop, family which) {
    if (which != family::objects) return run_kv_case(path, bytes, pop, which);
    case_result r;
    auto& v = r.violations;
    r.consistent = check_consistent(path, r.check_problem, v);
    if (file_bytes(path) != bytes) v.push_back("the pool check changed the file");
    try {
        auto s = ferrite::store::open(path, layout);
        r.opened = true;
        auto& names = s.names();
        const unsigned t = 0;
        open_and_use("u64s", v, [&] {
            auto x = names.open_vector<u64>("u64s");
            pop ? (void)x->pop_back() : (void)x->push_back(1);
        });
        open_and_use("f64s", v, [&] {
            auto x = names.open_vector<double>("f64s");
            pop ? (void)x->pop_back() : (void)x->push_back(1.0);
        });
        open_and_use("ticks", v, [&] {
            auto x = names.open_vector<tick>("ticks");
            pop ? (void)x->pop_back() : (void)x->push_back({1, 2.0, 3});
        });
        open_and_use("stack", v, [&] {
            auto x = names.open_dfc_stack<u64>("stack", 1, 16, small_growth());
            pop ? (void)x->pop(t) : (void)x->push(t, 1);
        });
        open_and_use("queue", v, [&] {
            auto x = names.open_dfc_queue<u64>("queue", 1, 16, small_growth());
            pop ? (void)x->dequeue(t) : (void)x->enqueue(t, 1);
        });
        open_and_use("deque", v, [&] {
            auto x = names.open_dfc_deque<u64>("deque", 1, 16, small_growth());
            pop ? (void)x->pop_front(t) : (void)x->push_back(t, 1);
        });
        open_and_use("pfc-stack", v, [&] {
            auto x = names.open<pfc_stack>("pfc-stack");
            pop ? (void)x->pop() : (void)x->push(1);
        });
        open_and_use("pfc-queue", v, [&] {
            auto x = names.open<pfc_queue>("pfc-queue");
            pop ? (void)x->pop() : (void)x->push(1);
        });
        open_and_use("pfc-deque", v, [&] {
            auto x = names.open<pfc_deque>("pfc-deque");
            pop ? (void)x->pop_front() : (void)x->push_back(1);
        });
        open_and_use("dpfc-stack", v, [&] {
            auto x = names.open<dpfc_stack_u64>("dpfc-stack", 1);
            (void)x->recover(t);
            pop ? (void)x->pop(t) : (void)x->push(t, 1);
        });
        open_and_use("dpfc-queue", v, [&] {
            auto x = names.open<dpfc_queue_u64>("dpfc-queue", 1);
            (void)x->recover(t);
            pop ? (void)x->dequeue(t) : (void)x->enqueue(t, 1);
        });
        // The durable sets: every key visited (the scan reads each member node), then an
        // update (an erase on odd cases, else an upsert / insert).
        open_and_use("smap", v, [&] {
            auto x = names.open<soft_map>("smap", small_areas());
            std::vector<u64> keys;
            x->for_each([&](const u64& k, const u64&) { keys.push_back(k); });
            for (const u64 k : keys) (void)x->get(k);
            pop ? (void)x->erase(1) : (void)x->insert_or_assign(1, 2);
        });
        open_and_use("lfset", v, [&] {
            auto x = names.open<linkfree_set>("lfset", small_areas());
            std::vector<u64> keys;
            x->for_each([&](const u64& k) { keys.push_back(k); });
            for (const u64 k : keys) (void)x->contains(k);
            pop ? (void)x->erase(3) : (void)x->insert(3);
        });
        // The ordered map: store::open validated its header (geometry, commit line, log,
        // root); its nodes are validated as lazy recovery reaches them, so a damaged node
        // is a damaged_pool ("incll tree") from the scan or the update that reaches it.
        open_and_use("omap", v, [&] {
            try {
                auto x = names.open<omap>("omap", small_tree());
                std::vector<u64> keys;
                x->scan(0, 1000, [&](u64 k, u64) { keys.push_back(k); });
                for (const u64 k : keys) (void)x->get(k);
                pop ? (void)x->erase(5) : (void)x->insert_or_assign(5, 6);
            } catch (const ferrite::damaged_pool& e) {
                if (e.region() != "incll tree") throw;
            }
        });
        open_and_use("omap16", v, [&] {
            try {
                auto x = names.open<omap16>("omap16", small_tree());
                std::vector<ferrite::key16> keys;
                x->scan(ferrite::key16{}, 1000, [&](const ferrite::key16& k, u64) { keys.push_back(k); });
                for (const auto& k : keys) (void)x->get(k);
                const auto k5 = ferrite::key16::from_string("fuzz-key5");
                pop ? (void)x->erase(k5) : (void)x->insert_or_assign(k5, 6);
            } catch (const ferrite::damaged_pool& e) {
                if (e.region() != "incll tree") throw;
            }
        });
        s.close();
    } catch (const ferrite::error& e) {
        if (r.opened) {
            v.push_back(std::string("closing threw: ") + e.what());
        } else {
            r.refusal = e.what();
            if (file_bytes(path) != bytes) v.push_back("store::open refused, but the file changed");
            if (r.consistent) v.push_back("the pool check said consistent, but store::open refused: " + r.refusal);
        }
    } catch (const std::exception& e) {
        v.push_back(std::string(r.opened ? "using the store" : "store::open") +
                    " threw a non-ferrite exception: " + e.what());
    }
    if (!r.opened) return r;
    // After a success: the heap and the pool check are clean.
    try {
        auto p = ferrite::pmem::pool::inspect(path);
        auto heap = ferrite::alloc::buddy_heap::open(p, p.heap_offset());
        for (const auto& problem : heap.check()) v.push_back("after a successful open, the heap check: " + problem);
    } catch (const std::exception& e) {
        v.push_back(std::string("after a successful open, the heap does not open: ") + e.what());
    }
    std::string problem;
    if (!check_consistent(path, problem, v)) v.push_back("after a successful open, the pool check: " + problem);
    return r;
}

// ---- a kv case ----------------------------------------------------------------------------

// Reads back every known key (the value copied out, as a reply does), the engine's figures,
// then one write (a delete on odd cases, else a set) and a get-and-touch (gat: a write of the
// expiry).
void use_kv(ferrite::kv::engine& e, bool pop) {
    namespace kv = ferrite::kv;
    const std::int64_t now = kv::unix_now();
    std::string reply;
    const kv::item_reader read = [&](const kv::item_view& it) {
        reply.assign(it.key);
        reply.append(it.value);
        reply.append(std::to_string(it.flags) + " " + std::to_string(it.expires_at) + " " + std::to_string(it.cas));
    };
    const auto keys = kv_keys();
    for (const auto& key : keys) (void)e.get(key, now, std::nullopt, read);
    (void)e.stats();
    if (pop) {
        (void)e.remove(keys[0], 0, now);
    } else {
        kv::store_request r;
        r.key = "fuzz";
        r.value = "a value\r\nover two lines";
        (void)e.store(r, now);
    }
    (void)e.get(keys[1], now, now + 3600, read);
    (void)e.stats();
}

// Where two files differ: the size, or the first few differing byte ranges.
std::string differences(const std::string& was, const std::string& is) {
    if (was.size() != is.size()) return "size " + std::to_string(was.size()) + " -> " + std::to_string(is.size());
    std::string out;
    int ranges = 0;
    for (std::size_t i = 0; i < was.size() && ranges < 4;) {
        if (was[i] == is[i]) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < was.size() && was[j] != is[j]) ++j;
        out.append(out.empty() ? "bytes " : ", ").append(std::to_string(i)).append("..").append(std::to_string(j));
        ++ranges;
        i = j;
    }
    return out;
}

// The engine as the server opens it (apps/kv/main.cpp's options where they matter here).
ferrite::kv::soft_engine_options kv_soft_options(const fs::path& path) {
    ferrite::kv::soft_engine_options o;
    o.pool = path;
    o.index_area_bytes = 4096;
    o.recovery_threads = 1;
    return o;
}
ferrite::kv::cpnvm_engine_options kv_cpnvm_options(const fs::path& path) {
    ferrite::kv::cpnvm_engine_options o;
    o.pool = path;
    o.worker_threads = 1;
    o.interval = std::chrono::hours(1);
    return o;
}

// Opens the kv pool at `path` with its engine (then sets `opened`), uses it as use_kv does,
// closes it; the engine's check_items() problems go to `problems`.
void open_and_use_kv(const fs::path& path, bool pop, family which, bool& opened, std::vector<std::string>& problems) {
    if (which == family::kv_soft) {
        ferrite::kv::soft_engine e(kv_soft_options(path));
        opened = true;
        use_kv(e, pop);
        for (const auto& x : e.check_items()) problems.push_back(x);
    } else {
        ferrite::kv::cpnvm_engine e(kv_cpnvm_options(path));
        opened = true;
        e.worker_started({});
        e.batch_begin();
        use_kv(e, pop);
        e.batch_end();
        e.worker_stopping();
        for (const auto& x : e.check_items()) problems.push_back(x);
    }
}

// A kv case: the pool check (it must not crash or write; its verdict is only reported: the
// engines validate more than the store, their items); then the engine's open, which either
// refuses with a ferrite::error or usage_error, the file unchanged, or opens, reads back every
// item and writes once with no violation, and then its check and a second open are clean.
case_result run_kv_case(const fs::path& path, const std::string& bytes, bool pop, family which) {
    case_result r;
    auto& v = r.violations;
    r.consistent = check_consistent(path, r.check_problem, v);
    if (file_bytes(path) != bytes) v.push_back("the pool check changed the file");
    std::vector<std::string> problems;
    const auto failed = [&](const std::string& what) {
        if (r.opened) v.push_back("after a successful open, using or closing the engine threw " + what);
        else r.refusal = what;
    };
    try {
        open_and_use_kv(path, pop, which, r.opened, problems);
    } catch (const ferrite::error& e) {
        failed(e.what());
    } catch (const ferrite::usage_error& e) {
        failed(std::string("usage error: ") + e.what());
    } catch (const std::exception& e) {
        v.push_back(std::string(r.opened ? "using the engine" : "the engine's open") +
                    " threw a non-ferrite exception: " + e.what());
        return r;
    }
    if (!r.opened) {
        if (const std::string now = file_bytes(path); now != bytes)
            v.push_back("the engine refused the pool, but the file changed (" + differences(bytes, now) +
                        "): " + r.refusal);
        return r;
    }
    for (const auto& x : problems) v.push_back("after a successful open and use, the engine's check: " + x);
    try {
        std::vector<std::string> again;
        bool reopened = false;
        open_and_use_kv(path, !pop, which, reopened, again);
        for (const auto& x : again) v.push_back("the second open's check: " + x);
    } catch (const std::exception& e) {
        v.push_back(std::string("the pool opened and closed, but a second open threw: ") + e.what());
    }
    return r;
}

// Cases run in a worker process forked from the test (forking one per case would cost more
// than the case under ASan: every page the child touches is copied or faulted in afresh). The
// test writes the case's file, sends "pop-flag\n"; the worker reads the file as the bytes to
// compare against, truncates its stderr log, runs the case and answers with key\tvalue lines
// ending in "done". A worker that dies (a signal, a sanitizer report) or stays silent past
// the time limit (killed) fails that case; the next case starts a fresh worker.
class worker {
public:
    worker(fs::path file, fs::path log, int timeout_s, family which)
        : file_(std::move(file)), log_(std::move(log)), timeout_s_(timeout_s), family_(which) {}
    ~worker() { stop(); }
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    case_result run(bool pop) {
        if (env_number("FERRITE_FUZZ_FORK", 1) == 0) {  // in this process (a debugger, a profiler)
            auto r = run_case(file_, file_bytes(file_), pop, family_);
            r.finished = true;
            return r;
        }
        if (pid_ <= 0) start();
        case_result r;
        const char request[] = {pop ? '1' : '0', '\n'};
        if (::write(to_, request, sizeof request) != static_cast<ssize_t>(sizeof request)) {
            r.violations.push_back("the worker is gone before the case");
            stop();
            return r;
        }
        std::string text;
        bool timed_out = false, done = false;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
        while (!done) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                timed_out = true;
                break;
            }
            pollfd pfd{from_, POLLIN, 0};
            if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
            char buf[4096];
            const auto n = ::read(from_, buf, sizeof buf);
            if (n <= 0) break;  // the worker died
            text.append(buf, static_cast<std::size_t>(n));
            done = text.size() >= 5 && text.compare(text.size() - 5, 5, "done\n") == 0;
        }
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            const auto tab = line.find('\t');
            if (tab == std::string::npos) continue;
            const auto key = line.substr(0, tab), value = line.substr(tab + 1);
            if (key == "consistent") r.consistent = value == "1";
            else if (key == "opened") r.opened = value == "1";
            else if (key == "check") r.check_problem = value;
            else if (key == "refusal") r.refusal = value;
            else if (key == "violation") r.violations.push_back(value);
        }
        r.finished = done;
        if (done) return r;
        if (timed_out) {
            ::kill(pid_, SIGKILL);
            r.violations.push_back("hang: no result within " + std::to_string(timeout_s_) + " s (killed)");
        }
        const int status = stop();
        if (!timed_out && WIFSIGNALED(status))
            r.violations.push_back("killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                                   strsignal(WTERMSIG(status)) + ")");
        else if (!timed_out)
            r.violations.push_back("the case exited with status " + std::to_string(WEXITSTATUS(status)) +
                                   " before reporting (a sanitizer report?)");
        return r;
    }

private:
    void start() {
        int down[2], up[2];
        if (::pipe(down) != 0 || ::pipe(up) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        std::fflush(nullptr);
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        if (pid_ == 0) {
            ::close(down[1]);
            ::close(up[0]);
            serve(down[0], up[1]);
        }
        ::close(down[0]);
        ::close(up[1]);
        to_ = down[1];
        from_ = up[0];
    }

    [[noreturn]] void serve(int in, int out) {
        const int err = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err >= 0) ::dup2(err, 2);
        char request[2];
        while (::read(in, request, 2) == 2) {
            if (::ftruncate(2, 0) == 0) ::lseek(2, 0, SEEK_SET);
            const auto r = run_case(file_, file_bytes(file_), request[0] == '1', family_);
            std::ostringstream o;
            o << "consistent\t" << r.consistent << "\nopened\t" << r.opened << "\ncheck\t"
              << one_line(r.check_problem) << "\nrefusal\t" << one_line(r.refusal) << "\n";
            for (const auto& x : r.violations) o << "violation\t" << one_line(x) << "\n";
            o << "done\n";
            const std::string s = o.str();
            for (std::size_t off = 0; off < s.size();) {
                const auto n = ::write(out, s.data() + off, s.size() - off);
                if (n <= 0) ::_exit(1);
                off += static_cast<std::size_t>(n);
            }
        }
        ::_exit(0);  // no atexit handlers, no leak check of the forked heap
    }

    int stop() {
        int status = 0;
        if (to_ >= 0) ::close(to_);
        if (from_ >= 0) ::close(from_);
        to_ = from_ = -1;
        if (pid_ > 0) ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return status;
    }

    fs::path file_, log_;
    int timeout_s_;
    family family_;
    pid_t pid_ = -1;
    int to_ = -1, from_ = -1;
};

std::string head_of(const fs::path& log, std::size_t lines) {
    std::ifstream in(log);
    std::string out, line;
    for (std::size_t i = 0; i < lines && std::getline(in, line); ++i) out += "      " + line + "\n";
    return out;
}

// ---- the test ---------------------------------------------------------------------------

struct counts {
    u64 cases = 0, refused = 0, opened = 0, consistent = 0, failed = 0;
};

class PoolFuzz : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = "/dev/shm/ferrite-pool-fuzz-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path dir_;
};

// The fuzz run of one family of images: `cases` mutations (FERRITE_FUZZ_ONLY: one of them).
void fuzz(const fs::path& dir_, family which, u64 cases) {
    const u64 seed = run_seed();
    const int timeout_s = static_cast<int>(env_number("FERRITE_FUZZ_TIMEOUT", 20));
    const bool dfc_strict = env_number("FERRITE_FUZZ_DFC_STRICT", 1) != 0;
    const bool verbose = env_number("FERRITE_FUZZ_VERBOSE", 0) != 0;
    const char* only_env = std::getenv("FERRITE_FUZZ_ONLY");
    const bool only = only_env != nullptr && *only_env != '\0';
    const u64 only_case = only ? std::strtoull(only_env, nullptr, 0) : 0;
    std::printf("pool fuzz: seed %llu, %llu cases (FERRITE_FUZZ_SEED, FERRITE_FUZZ_CASES / FERRITE_FUZZ_KV_CASES)\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(cases));

    const auto t0 = std::chrono::steady_clock::now();
    const auto images = which == family::objects ? build_images(dir_, seed) : build_kv_images(dir_, which);
    const auto t1 = std::chrono::steady_clock::now();
    std::printf("images:");
    for (const auto& im : images) std::printf(" %s (%zu regions)", im.name.c_str(), im.regions.size());
    std::printf("\n");

    const fs::path file = dir_ / "case.pool", log = dir_ / "case.log";
    std::map<std::string, counts> by_region, by_kind, by_image;
    std::map<std::string, bool> expects_refusals;  // region -> whether some case must be refused
    std::vector<std::string> failures, dfc_failures;
    u64 run = 0;
    mutation m;
    worker runner(file, log, timeout_s, which);

    // Every image unmutated first: it must open, and check consistent.
    for (const auto& im : images) {
        write_bytes(file, im.bytes);
        const auto r = runner.run(false);
        EXPECT_TRUE(r.opened && r.consistent && r.violations.empty())
            << "image " << im.name << " unmutated: opened " << r.opened << ", consistent " << r.consistent << " ("
            << r.check_problem << ") " << (r.violations.empty() ? "" : r.violations[0]) << r.refusal;
    }

    for (u64 c = only ? only_case : 0; c < (only ? only_case + 1 : cases); ++c) {
        ferrite::sim::rng rng(ferrite::sim::mix(seed, c));
        const auto& im = images[rng.below(images.size())];
        mutate(im, rng, m);
        const auto& reg = im.regions[m.region];
        write_bytes(file, m.bytes);
        const auto r = runner.run(c % 2 == 1);
        ++run;
        const std::string kind_name = kind_names[static_cast<int>(m.what)];
        const std::string desc = "seed " + std::to_string(seed) + " case " + std::to_string(c) + ", image " +
                                 im.name + ", region '" + reg.name + "', " + kind_name + ": " + m.description;
        for (auto* k : {&by_region[reg.name], &by_kind[kind_name], &by_image[im.name]}) {
            ++k->cases;
            k->refused += r.finished && !r.opened;
            k->opened += r.opened;
            k->consistent += r.consistent;
            k->failed += !r.violations.empty();
        }
        // Element arrays and rings, DFC nodes and announcements, and logs at rest (a vector's swap log,
        // the heap's log entries) are data as much as metadata: a mutation there may always open.
        bool data = false;
        // So are a kv item's value, the program image's log records at rest, the soft root's CAS
        // and flush words (any number is an answer) and the links of the program image's free
        // blocks (read when a block is handed out, not at open).
        for (const char* d : {" data", " ring", " nodes", " announcements", " swap log", "log entries", " values",
                              "log records", "cas and flush", "free blocks"})
            data = data || reg.name.find(d) != std::string::npos;
        expects_refusals.emplace(reg.name, !data);
        if (verbose)
            std::printf("%s -> %s%s\n", desc.c_str(),
                        r.opened ? "opened" : ("refused: " + r.refusal.substr(0, 160)).c_str(),
                        r.consistent ? " [check: consistent]" : "");
        if (!r.violations.empty()) {
            std::string text = desc + "\n";
            for (const auto& x : r.violations) text += "    " + x + "\n";
            if (!r.finished) text += head_of(log, 30);
            (reg.of == owner::dfc ? dfc_failures : failures).push_back(text);
        }
        fs::remove(file);
    }
    const auto t2 = std::chrono::steady_clock::now();

    auto table = [](const char* title, const std::map<std::string, counts>& rows) {
        std::printf("%-26s %7s %7s %7s %10s %7s\n", title, "cases", "refused", "opened", "consistent", "failed");
        for (const auto& [k, v] : rows)
            std::printf("%-26s %7llu %7llu %7llu %10llu %7llu\n", k.c_str(), static_cast<unsigned long long>(v.cases),
                        static_cast<unsigned long long>(v.refused), static_cast<unsigned long long>(v.opened),
                        static_cast<unsigned long long>(v.consistent), static_cast<unsigned long long>(v.failed));
    };
    table("region", by_region);
    table("kind", by_kind);
    table("image", by_image);
    std::printf("pool fuzz: %llu mutations in %.1f s (images built in %.1f s); %zu failures, %zu in DFC regions\n",
                static_cast<unsigned long long>(run), std::chrono::duration<double>(t2 - t1).count(),
                std::chrono::duration<double>(t1 - t0).count(), failures.size(), dfc_failures.size());

    for (std::size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
    if (failures.size() > 20) ADD_FAILURE() << failures.size() - 20 << " more failures (seed " << seed << ")";
    if (!dfc_failures.empty()) {
        std::printf("DFC-region failures%s:\n",
                    dfc_strict ? "" : " (not failing the test: FERRITE_FUZZ_DFC_STRICT=0)");
        for (std::size_t i = 0; i < dfc_failures.size() && i < 30; ++i) std::printf("  %s", dfc_failures[i].c_str());
        if (dfc_strict)
            for (const auto& f : dfc_failures) ADD_FAILURE() << f;
    }
    if (!only)
        for (const auto& [name, expected] : expects_refusals) {
            if (!expected || by_region[name].refused != 0) continue;
            const bool dfc = name.rfind("dfc_", 0) == 0;
            if (dfc && !dfc_strict)
                std::printf("region '%s' was never refused (FERRITE_FUZZ_DFC_STRICT=0)\n", name.c_str());
            else
                ADD_FAILURE() << "region '" << name << "' was never refused in " << by_region[name].cases
                              << " cases: the mutations miss it (seed " << seed << ")";
        }
}

TEST_F(PoolFuzz, MutatedPoolsAreRefusedUnchangedOrOpenClean) {
    fuzz(dir_, family::objects, env_number("FERRITE_FUZZ_CASES", 3000));
}

// ferrite-kv's pools (pool_image.hpp, build_kv_images), opened by the engine as the server
// opens them: a refusal is a ferrite::error or usage_error with the file unchanged; an open
// reads back every item, writes once, closes, and the engine's check and a second open are
// clean.
TEST_F(PoolFuzz, MutatedSoftEnginePoolsAreRefusedUnchangedOrOpenClean) {
    fuzz(dir_, family::kv_soft, env_number("FERRITE_FUZZ_KV_CASES", 300));
}

TEST_F(PoolFuzz, MutatedCpnvmEnginePoolsAreRefusedUnchangedOrOpenClean) {
    fuzz(dir_, family::kv_cpnvm, env_number("FERRITE_FUZZ_KV_CASES", 300));
}

}  // namespace
