// The fuzzer's pool images and their regions: see pool_image.hpp.
#include "pool_image.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/containers/program_image.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/index/incll_layout.hpp"
#include "ferrite/containers/deque_layout.hpp"
#include "ferrite/containers/vector_layout.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/site_registry.hpp"
#include "cpnvm_engine.hpp"
#include "cpnvm_table.hpp"
#include "item_layout.hpp"
#include "soft_engine.hpp"

FERRITE_PERSISTENT_TYPE(ferrite_fuzz::tick, "fuzz_tick");

namespace ferrite_fuzz {
namespace {

using u64 = std::uint64_t;
namespace fs = std::filesystem;

// 256 KiB: room for every object, its growth and a fragmented heap, small enough that a
// case (write, check, open, check again) stays in the milliseconds under ASan.
constexpr u64 pool_bytes = u64{256} << 10;

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary | std::ios::ate);
    if (!in) throw std::runtime_error("cannot read " + p.string());
    std::string out(static_cast<std::size_t>(in.tellg()), '\0');
    in.seekg(0);
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    return out;
}

void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + p.string());
}

ferrite::combining::dfc_options dfc_opts() {
    ferrite::combining::dfc_options o;
    o.first_growth_nodes = 16;  // small chunks: the node pools grow into the heap soon
    return o;
}

// `rounds` rounds of operations on every object, from `first` on: pushes mostly, a pop
// every third round, a swap (the vector's undo log) every fifth.
void churn(ferrite::store& s, u64 first, u64 rounds) {
    auto& names = s.names();
    auto u = names.open_vector<u64>("u64s", 4);
    auto f = names.open_vector<double>("f64s", 4);
    auto t = names.open_vector<tick>("ticks", 4);
    auto st = names.open_dfc_stack<u64>("stack", 2, 16, dfc_opts());
    auto q = names.open_dfc_queue<u64>("queue", 2, 16, dfc_opts());
    auto dq = names.open_dfc_deque<u64>("deque", 2, 16, dfc_opts());
    auto ps = names.open<pfc_stack>("pfc-stack", 4);
    auto pq = names.open<pfc_queue>("pfc-queue", 4);
    auto pd = names.open<pfc_deque>("pfc-deque", 4);
    auto dps = names.open<dpfc_stack_u64>("dpfc-stack", 2, 16);  // full after 16 pushes: `full` answers
    auto dpq = names.open<dpfc_queue_u64>("dpfc-queue", 2, 16);  // the ring wraps
    auto sm = names.open<soft_map>("smap", small_areas());
    auto ls = names.open<linkfree_set>("lfset", small_areas());
    auto om = names.open<omap>("omap", small_tree());
    auto om16 = names.open<omap16>("omap16", small_tree());
    // A CpNvm image (8 KiB, one 4 KiB log): a counter root, checkpointed every round.
    auto img = names.open<ferrite::program_image>(
        "image", ferrite::image_options{.image_bytes = 8192, .max_threads = 1, .log_bytes = 4096, .base = 0,
                                         .interval = std::chrono::milliseconds(0), .lazy = false, .load_threads = 1,
                                         .before_commit = {}});
    auto me = img->register_thread();
    auto* counter = static_cast<u64*>(img->root("counter"));
    if (counter == nullptr) {
        counter = static_cast<u64*>(img->allocate(64));
        img->set_root("counter", counter);
    }
    for (u64 i = first; i < first + rounds; ++i) {
        img->mark(counter, 8);
        *counter = i;
        img->checkpoint();
        // Keys 0..47 recur: later rounds erase, re-insert and (the map) replace them, leaving
        // deleted, superseded and reused node slots in the areas.
        (void)sm->insert(i % 48, i);
        (void)ls->insert(i % 48);
        // Keys 0..39 of the ordered map: inserts, assigns (some values too wide for an undo
        // word) and erases, an epoch ended every other round: undo words, log entries, splits.
        (void)om->insert_or_assign((i * 13) % 40, i % 3 ? i : ~i);
        if (i % 3 == 1) (void)om->erase((i * 7) % 40);
        if (i % 2 == 0) (void)om->sync();
        // The same on the tree of 16-byte keys (string keys sharing their first 8 bytes).
        (void)om16->insert_or_assign(ferrite::key16::from_string("fuzz-key" + std::to_string((i * 13) % 40)), i % 3 ? i : ~i);
        if (i % 3 == 1) (void)om16->erase(ferrite::key16::from_string("fuzz-key" + std::to_string((i * 7) % 40)));
        if (i % 2 == 0) (void)om16->sync();
        if (i % 4 == 1) (void)sm->insert_or_assign((i * 7) % 48, i * 100);
        if (i % 3 == 0) {
            (void)sm->erase((i * 5) % 48);
            (void)ls->erase((i * 11) % 48);
        }
        (void)ps->push(i);
        (void)pq->push(i * 5);
        (void)(i % 2 ? pd->push_back(i) : pd->push_front(i));
        (void)u->push_back(i * 3);
        (void)f->push_back(static_cast<double>(i) * 0.5);
        (void)t->push_back({i, static_cast<double>(i) * 1.5, static_cast<std::uint32_t>(i)});
        (void)st->push(0, i);
        (void)dps->push(i % 2, i);
        (void)dpq->enqueue(i % 2, i);
        (void)q->enqueue(0, i);
        (void)(i % 2 ? dq->push_back(0, i) : dq->push_front(0, i));
        if (i % 3 == 2) {
            (void)u->pop_back();
            (void)t->pop_back();
            (void)st->pop(0);
            (void)dps->pop(1);
            (void)dpq->dequeue(0);
            (void)q->dequeue(0);
            (void)(i % 2 ? dq->pop_front(0) : dq->pop_back(0));
            (void)ps->pop();
            (void)pq->pop();
            (void)(i % 2 ? pd->pop_front() : pd->pop_back());
        }
        if (i % 5 == 4) {
            (void)u->swap(0, i % 7);
            (void)f->swap(1, i % 5);
        }
    }
}

// The regions of a buddy heap at pool offset `ho`, named "<prefix> header", ...: header, the
// undo log's tag word and entries, the confirm slots, the block map, the links of free blocks.
void heap_regions(const std::string& prefix, owner of, const ferrite::alloc::buddy_heap& heap, u64 ho,
                  std::vector<region>& rs, std::set<u64>& offsets) {
    const auto& g = heap.geometry();
    rs.push_back({prefix + " header", of, {{ho, sizeof(ferrite::alloc::heap_header)}}});
    rs.push_back({prefix + " log control", of, {{ho + g.log_offset, 8}}});  // the tag word; the rest is padding
    rs.push_back({prefix + " log entries", of, {{ho + g.log_offset + 64, g.slots_offset - g.log_offset - 64}}});
    rs.push_back({prefix + " slots", of, {{ho + g.slots_offset, g.map_offset - g.slots_offset}}});
    rs.push_back({prefix + " map", of, {{ho + g.map_offset, g.arena_size / ferrite::alloc::granule}}});
    region links{prefix + " free links", of, {}};
    for (const auto& b : heap.blocks()) {
        offsets.insert(ho + b.offset);
        offsets.insert(b.offset);
        if (b.state == ferrite::alloc::block_state::free) links.ranges.push_back({ho + b.offset, 16});
    }
    rs.push_back(links);
}

// Each catalog block's header line and its first `entries` entry lines (at most its capacity).
void catalog_regions(const ferrite::alloc::name_directory& directory, const std::byte* base, std::vector<region>& rs,
                     std::set<u64>& offsets, u64 entries_cap = 63) {
    region cat{"catalog", owner::catalog, {}};
    for (const void* b : directory.blocks()) {
        const u64 off = static_cast<u64>(static_cast<const std::byte*>(b) - base);
        offsets.insert(off);
        u64 entries;
        std::memcpy(&entries, base + off + 16, 8);
        cat.ranges.push_back({off, 64 + 64 * std::min<u64>({entries, u64{63}, entries_cap})});
    }
    rs.push_back(cat);
}

// A durable set's header block, then each area's line 0 and its node slots, as validation
// finds them (a crash image's pending areas too: the heap is not recovered here, and
// validation accepts allocation-pending blocks).
void sets_regions(const std::string& prefix, const ferrite::pmem::pool_ref& p, const ferrite::alloc::buddy_heap& heap,
                  u64 anchor, u64 block, std::vector<region>& rs, std::set<u64>& offsets) {
    rs.push_back({prefix + " header", owner::sets, {{anchor, block}}});
    region area_headers{prefix + " area headers", owner::sets, {}};
    region nodes{prefix + " nodes", owner::sets, {}};
    const auto owned = ferrite::sets::node_store::validate(p, heap, anchor);
    const u64 area_bytes = ferrite::sets::node_store::recorded_shape(p, heap, anchor).area_bytes;
    for (std::size_t i = 1; i < owned.size(); ++i) {
        const u64 a = owned[i];
        offsets.insert(a);
        area_headers.ranges.push_back({a, ferrite::sets::node_size});
        nodes.ranges.push_back({a + ferrite::sets::node_size, area_bytes - ferrite::sets::node_size});
        for (u64 n : {u64{1}, u64{2}, area_bytes / ferrite::sets::node_size - 1}) {
            offsets.insert(a + n * ferrite::sets::node_size);      // a node (SOFT superseded_by)
            offsets.insert(a + n * ferrite::sets::node_size + 1);  // with a polarity bit
        }
    }
    if (!area_headers.ranges.empty()) rs.push_back(area_headers);
    if (!nodes.ranges.empty()) rs.push_back(nodes);
}

// The whole file last; every offset worth writing also +-64.
void finish_regions(image& im, std::set<u64>& offsets) {
    im.regions.push_back({"file", owner::file, {{0, im.bytes.size()}}});
    for (u64 o : std::vector<u64>(offsets.begin(), offsets.end())) {
        offsets.insert(o + 64);
        if (o >= 64) offsets.insert(o - 64);
    }
    im.offsets.assign(offsets.begin(), offsets.end());
}

}  // namespace

std::vector<image> build_images(const fs::path& dir, u64 seed) {
    const fs::path path = dir / "images.pool";
    fs::remove(path);
    std::vector<image> out;
    {
        ferrite::store_options o;
        o.size = pool_bytes;
        o.heap.confirm_slots = 16;
        o.directory.entries_per_block = 2;  // a chain of catalog blocks
        auto s = ferrite::store::create(path, layout, o);
        churn(s, 0, 40);
        // An object created and grown, then left: more blocks of more sizes in the heap.
        auto spare = s.names().open_vector<u64>("spare", 2);
        for (u64 i = 0; i < 100; ++i) (void)spare->push_back(i);
        churn(s, 40, 20);
    }
    out.push_back({"clean", file_bytes(path), {}, {}, 0, 0, family::objects});
    {
        auto s = ferrite::store::open(path, layout);
        churn(s, 60, 15);
        out.push_back({"open", file_bytes(path), {}, {}, 0, 0, family::objects});  // the mapping is shared: the file as a kill leaves it
    }
    {
        auto s = ferrite::store::open(path, layout);
        ferrite::sim::site_registry sites;
        ferrite::sim::session* self = nullptr;
        ferrite::sim::session::options so;
        std::vector<std::byte> crash;
        so.at_event = [&](u64 event) {
            // A handful of crash points spread over the run (it has a few thousand events).
            if (event % 389 != 97 || out.size() >= 7) return;
            self->crash_image(ferrite::sim::mix(seed, event), crash);
            out.push_back({"crash@" + std::to_string(event),
                           std::string(reinterpret_cast<const char*>(crash.data()), crash.size()), {}, {}, 0, 0,
                           family::objects});
        };
        {
            ferrite::sim::session session(s.pool().base(), s.pool().size(), 1, sites, so);
            self = &session;
            ferrite::sim::session::binding bind(&session, 0);
            churn(s, 75, 30);
        }
    }
    fs::remove(path);
    for (auto& im : out) find_regions(im, dir);
    return out;
}

void find_regions(image& im, const fs::path& dir) {
    const fs::path path = dir / "regions.pool";
    write_bytes(path, im.bytes);
    auto p = ferrite::pmem::pool::inspect(path);
    const u64 ho = p.heap_offset();
    auto heap = ferrite::alloc::buddy_heap::open(p, ho);
    const std::byte* base = p.base();
    auto word = [&](u64 off) {
        u64 w;
        std::memcpy(&w, base + off, 8);
        return w;
    };
    im.heap_offset = ho;
    im.data_top = p.used();
    std::set<u64> offsets;
    auto& rs = im.regions;
    rs.push_back({"header identity", owner::pool, {{0, 256}}});
    rs.push_back({"header state", owner::pool, {{256, 64}}});
    rs.push_back({"header roots", owner::pool, {{320, 64}}});
    heap_regions("heap", owner::heap, heap, ho, rs, offsets);
    auto directory = ferrite::alloc::name_directory::open_or_create(p, heap);
    catalog_regions(directory, base, rs, offsets);
    for (const auto& e : directory.entries()) {
        const std::string name(e.name_view());
        const u64 anchor = e.anchor;
        if (anchor == 0) continue;
        offsets.insert(anchor);
        const u64 block = heap.block_size(base + anchor);
        const std::string kind = ferrite::containers::kind_name(e.kind);
        if (is_kind<pfc_queue>(e) || is_kind<pfc_deque>(e)) {  // stored as a deque
            ferrite::containers::deque_header h;
            std::memcpy(&h, base + anchor, sizeof h);
            rs.push_back({kind + " " + name + " header", owner::vector, {{anchor, sizeof h}}});
            region ring{kind + " " + name + " ring", owner::vector, {}};
            std::vector<u64> rings;
            if (h.data != 0) rings.push_back(h.data);
            if (h.log_tag == ferrite::containers::deque_log_tag::replace && h.replace_data != 0 &&
                h.replace_data != h.data)
                rings.push_back(h.replace_data);
            for (const u64 d : rings) {
                offsets.insert(d);
                ring.ranges.push_back({d, std::max<u64>(heap.block_size(base + d), 8)});
            }
            if (!ring.ranges.empty()) rs.push_back(ring);
        } else if (is_kind<ferrite::vector<u64, ferrite::alloc::buddy_heap>>(e) || is_kind<pfc_stack>(e)) {
            ferrite::containers::vector_header h;
            std::memcpy(&h, base + anchor, sizeof h);
            rs.push_back({kind + " " + name + " header", owner::vector, {{anchor, sizeof h}}});
            if (block > sizeof h) rs.push_back({kind + " " + name + " swap log", owner::vector, {{anchor + sizeof h, block - sizeof h}}});
            region data{kind + " " + name + " data", owner::vector, {}};
            if (h.data != 0) {
                offsets.insert(h.data);
                data.ranges.push_back({h.data, std::max<u64>(heap.block_size(base + h.data), 8)});
            }
            if (h.log_tag == ferrite::containers::vector_log_tag::replace && h.replace_data != 0 &&
                h.replace_data != h.data)
                data.ranges.push_back({h.replace_data, std::max<u64>(heap.block_size(base + h.replace_data), 8)});
            if (!data.ranges.empty()) rs.push_back(data);
        } else if (is_kind<dpfc_stack_u64>(e) || is_kind<dpfc_queue_u64>(e)) {
            namespace c = ferrite::containers;
            const u64 threads = word(anchor + offsetof(c::dpfc_header, threads));
            const u64 capacity = word(anchor + offsetof(c::dpfc_header, capacity));
            const u64 results = c::dpfc_region::results_offset;
            rs.push_back({kind + " " + name + " header", owner::vector, {{anchor, 64}}});
            rs.push_back({kind + " " + name + " state records", owner::vector, {{anchor + 64, 128}}});
            rs.push_back({kind + " " + name + " results", owner::vector, {{anchor + results, threads * 64}}});
            rs.push_back({kind + " " + name + " data", owner::vector, {{anchor + results + threads * 64, capacity * 8}}});
            for (const u64 v : {threads, threads + 1, capacity, capacity + 1}) offsets.insert(v);
        } else if (is_kind<soft_map>(e) || is_kind<linkfree_set>(e)) {
            sets_regions(kind + " " + name, p, heap, anchor, block, rs, offsets);
        } else if (is_kind<omap>(e) || is_kind<omap16>(e)) {  // the tree's region (index/incll_layout.hpp)
            const u64 node_bytes = is_kind<omap>(e) ? ferrite::index::node_bytes_of<u64> : ferrite::index::node_bytes_of<ferrite::index::key128>;
            namespace il = ferrite::index::incll_layout;
            il::geometry g;
            std::memcpy(&g, base + anchor, sizeof g);
            rs.push_back({kind + " " + name + " geometry", owner::index, {{anchor, 64}}});
            rs.push_back({kind + " " + name + " commit line", owner::index, {{anchor + 64, 64}}});
            if (g.arena_offset > il::header_bytes && g.arena_offset < block) {
                rs.push_back({kind + " " + name + " log entries", owner::index, {{anchor + il::header_bytes, g.arena_offset - il::header_bytes}}});
                rs.push_back({kind + " " + name + " nodes", owner::index, {{anchor + g.arena_offset, block - g.arena_offset}}});
                for (u64 n = 0; n < 4; ++n) offsets.insert(g.arena_offset + n * node_bytes);  // node offsets
            }
        } else if (is_kind<ferrite::program_image>(e)) {
            // checkpoint/image_store.hpp: a header line (magic, version, base address, log
            // geometry, checksum), then the epoch_log region (logs and the persistent image:
            // data here). Read as a DFC header before, its base address became a thread count
            // and a "nodes" region far past the file, which a truncation could pick.
            rs.push_back({kind + " " + name + " header", owner::vector, {{anchor, 64}}});
            if (block > 64) rs.push_back({kind + " " + name + " log records", owner::vector, {{anchor + 64, block - 64}}});
        } else {  // a DFC structure
            namespace cb = ferrite::combining;
            const u64 threads = word(anchor + offsetof(cb::dfc_header, threads));
            const u64 fixed = cb::dfc_region::fixed_lines * 64 + threads * sizeof(cb::dfc_thread_record);
            rs.push_back({kind + " header", owner::dfc, {{anchor, cb::dfc_region::fixed_lines * 64}}});
            rs.push_back({kind + " announcements", owner::dfc,
                          {{anchor + cb::dfc_region::fixed_lines * 64, fixed - cb::dfc_region::fixed_lines * 64}}});
            region nodes{kind + " nodes", owner::dfc, {{anchor + fixed, block - fixed}}};
            const u64 capacity = word(anchor + offsetof(cb::dfc_header, capacity));
            for (u64 n = 1; n <= std::min<u64>(capacity, 4); ++n) offsets.insert(n);
            offsets.insert(capacity);
            offsets.insert(capacity + 1);
            for (unsigned k = 1; k < cb::dfc_max_chunks; ++k) {
                const u64 chunk = word(anchor + 128 + 8 * k);
                if (chunk == 0) break;
                nodes.ranges.push_back({ho + chunk, heap.block_size(heap.at(chunk))});
                offsets.insert((u64{k} << 32) | 1);
                offsets.insert((u64{k} << 32) | 17);
            }
            rs.push_back(nodes);
        }
    }
    finish_regions(im, offsets);
    p.close();
    fs::remove(path);
}

// ---- ferrite-kv's pools ---------------------------------------------------------------------

namespace {

namespace kv = ferrite::kv;

// Soft: a 1 MiB pool, 384 KiB of store heap (the catalog and the index in 4 KiB areas), 320
// KiB of user area (the kv root's 4 KiB, then the item heap). Cpnvm: a 1 MiB pool holding a
// program image of 128 KiB with two thread logs of 32 KiB (the opening thread, one worker).
constexpr u64 kv_pool_bytes = u64{1} << 20;
constexpr u64 kv_soft_heap_bytes = u64{384} << 10;
constexpr u64 kv_soft_user_bytes = u64{320} << 10;
constexpr u64 kv_cpnvm_image_bytes = u64{128} << 10;
constexpr u64 kv_cpnvm_log_bytes = u64{32} << 10;

// Far from now either way: an item that never expires during a run, one long expired.
constexpr std::int64_t kv_future = 4102444800;  // 2100-01-01
constexpr std::int64_t kv_past = 1000000000;     // 2001

kv::soft_engine_options kv_soft_create_options() {
    kv::soft_engine_options o;
    o.index_area_bytes = 4096;
    o.recovery_threads = 1;
    o.max_item_bytes = 4096;
    return o;
}

kv::cpnvm_engine_options kv_cpnvm_create_options() {
    kv::cpnvm_engine_options o;
    o.worker_threads = 1;
    o.log_bytes = kv_cpnvm_log_bytes;
    o.max_item_bytes = 4096;
    o.interval = std::chrono::hours(1);  // epochs commit at batch_end (sync), not by the clock
    o.mode = kv::durability::sync;
    return o;
}

kv::store_request set_request(const kv_item& it, kv::store_mode mode = kv::store_mode::set) {
    kv::store_request r;
    r.mode = mode;
    r.key = it.key;
    r.value = it.value;
    r.flags = it.flags;
    r.expires_at = it.expires_at;
    return r;
}

// kv_items(), then a counter incremented, an item touched, one deleted, one replaced, one
// appended to: freed blocks among the live ones.
void kv_fill(kv::engine& e) {
    const std::int64_t now = kv::unix_now();
    for (const auto& it : kv_items()) {
        if (e.store(set_request(it), now).result != kv::store_result::stored)
            throw std::runtime_error("kv image: storing '" + it.key + "' failed");
    }
    kv::arith_request incr;
    incr.key = "counter";
    incr.delta = 1;
    (void)e.arith(incr, now);
    (void)e.touch("touched", kv_future, now);
    (void)e.remove("deleted", 0, now);
    (void)e.store(set_request({"replaced", "the second value, longer than the first", 3, 0}), now);
    (void)e.store(set_request({"appended", ", and more", 0, 0}, kv::store_mode::append), now);
}

// The "open" image's changes: more items, one deleted, one replaced.
void kv_more(kv::engine& e, int from, int to) {
    const std::int64_t now = kv::unix_now();
    for (int i = from; i < to; ++i) {
        std::string key = "later:";
        key.append(std::to_string(i));
        (void)e.store(set_request({key, std::string(static_cast<std::size_t>(20 + 97 * i), static_cast<char>('a' + i)),
                                   static_cast<std::uint32_t>(i), 0}),
                      now);
    }
    (void)e.remove("key:3", 0, now);
    (void)e.store(set_request({"multi", "replaced\r\nover two lines\r\n", 9, 0}), now);
}

// The cpnvm engine's worker role for the calling thread, for a scope.
struct kv_worker {
    explicit kv_worker(kv::cpnvm_engine& e) : engine(e) {
        engine.worker_started({});
        engine.batch_begin();
    }
    ~kv_worker() {
        engine.batch_end();
        engine.worker_stopping();
    }
    kv_worker(const kv_worker&) = delete;
    kv_worker& operator=(const kv_worker&) = delete;
    kv::cpnvm_engine& engine;
};

}  // namespace

std::vector<kv_item> kv_items() {
    std::vector<kv_item> items = {
        {"user:42", "Ada", 0, 0},
        {"multi", "line one\r\nline two\r\nEND\r\nline four, after an END\r\n", 7, 0},
        {"big", std::string(3000, 'x'), 0xdeadbeef, 0},
        {"expiring", "later", 1, kv_future},
        {"expired", "gone", 2, kv_past},
        {"counter", "41", 0, 0},
        {"touched", "t", 5, kv_future - 1000},
        {"deleted", "d", 0, 0},
        {"replaced", "first", 0, 0},
        {"appended", "head", 4, 0},
        {std::string(250, 'k'), "the longest key", 0, 0},
    };
    for (int i = 0; i < 12; ++i) {
        std::string key = "key:";
        key.append(std::to_string(i));
        items.push_back({key, std::string(static_cast<std::size_t>(1 + 37 * i), static_cast<char>('A' + i)),
                         static_cast<std::uint32_t>(i * 1000), i % 3 == 0 ? kv_future : 0});
    }
    return items;
}

std::vector<std::string> kv_keys() {
    std::vector<std::string> keys;
    for (const auto& it : kv_items()) keys.push_back(it.key);
    for (int i = 0; i < 6; ++i) {
        std::string key = "later:";
        key.append(std::to_string(i));
        keys.push_back(key);
    }
    return keys;
}

std::vector<image> build_kv_images(const fs::path& dir, family which) {
    const fs::path path = dir / "kv.pool";
    fs::remove(path);
    std::vector<image> out;
    if (which == family::kv_soft) {
        {
            ferrite::store_options o;
            o.size = kv_pool_bytes;
            o.heap_size = kv_soft_heap_bytes;
            o.user_bytes = kv_soft_user_bytes;
            auto s = ferrite::store::create(path, kv_soft_layout, o);
            {
                kv::soft_engine e(s.pool(), s.names(), s.user_area(), kv_soft_create_options());
                kv_fill(e);
            }
            s.close();
        }
        out.push_back({"clean", file_bytes(path), {}, {}, 0, 0, which});
        {
            auto o = kv_soft_create_options();
            o.pool = path;
            kv::soft_engine e(o);  // as the server opens it
            kv_more(e, 0, 6);
            out.push_back({"open", file_bytes(path), {}, {}, 0, 0, which});  // a shared mapping: what a kill leaves
        }
    } else {
        {
            ferrite::store_options o;
            o.size = kv_pool_bytes;
            auto s = ferrite::store::create(path, kv_cpnvm_layout, o);
            {
                ferrite::image_options io;
                io.image_bytes = kv_cpnvm_image_bytes;
                io.max_threads = 2;
                io.log_bytes = kv_cpnvm_log_bytes;
                io.interval = std::chrono::hours(1);
                auto img = s.names().open<ferrite::program_image>("kv", io);
                kv::cpnvm_engine e(img, kv_cpnvm_create_options());
                kv_worker w(e);
                kv_fill(e);
            }
            s.close();
        }
        out.push_back({"clean", file_bytes(path), {}, {}, 0, 0, which});
        {
            auto o = kv_cpnvm_create_options();
            o.pool = path;
            o.log_bytes = kv::cpnvm_engine_options{}.log_bytes;  // the engine's minimum; the image keeps its own
            kv::cpnvm_engine e(o);
            {
                kv_worker w(e);
                kv_more(e, 0, 3);
            }  // batch_end: committed only if due; worker_stopping takes part in a checkpoint
            e.worker_started({});
            e.batch_begin();
            kv_more(e, 3, 6);  // marked, never committed: lost in the copy
            out.push_back({"open", file_bytes(path), {}, {}, 0, 0, which});
            e.batch_end();
            e.worker_stopping();
        }
    }
    fs::remove(path);
    for (auto& im : out) find_kv_regions(im, dir);
    return out;
}

void find_kv_regions(image& im, const fs::path& dir) {
    const fs::path path = dir / "regions.pool";
    write_bytes(path, im.bytes);
    auto p = ferrite::pmem::pool::inspect(path);
    const u64 ho = p.heap_offset();
    auto heap = ferrite::alloc::buddy_heap::open(p, ho);
    const std::byte* base = p.base();
    auto word = [&](u64 off) {
        u64 w;
        std::memcpy(&w, base + off, 8);
        return w;
    };
    im.heap_offset = ho;
    im.data_top = p.used();
    std::set<u64> offsets;
    auto& rs = im.regions;
    rs.push_back({"header identity", owner::pool, {{0, 256}}});
    rs.push_back({"header state", owner::pool, {{256, 64}}});
    rs.push_back({"header roots", owner::pool, {{320, 64}}});
    heap_regions("heap", owner::heap, heap, ho, rs, offsets);
    auto directory = ferrite::alloc::name_directory::open_or_create(p, heap);
    // One block of room for 63 entries holds the kv pools' one entry: the used lines only, or
    // most mutations would land in unused entries.
    catalog_regions(directory, base, rs, offsets, directory.entries().size());
    region headers{"kv item headers", owner::kv, {}}, keys{"kv item keys", owner::kv, {}},
        values{"kv item values", owner::kv, {}};

    if (im.of == family::kv_soft) {
        for (const auto& e : directory.entries()) {
            if (e.name_view() != "items" || e.anchor == 0) continue;
            offsets.insert(e.anchor);
            sets_regions("index", p, heap, e.anchor, heap.block_size(base + e.anchor), rs, offsets);
        }
        // The kv root (soft_engine.cpp's kv_root): magic, version, seeds, heap offset and
        // size, checksum; then its own line of the CAS high-water mark and the flush marks.
        const u64 root = p.state().root_offset;
        rs.push_back({"kv root identity", owner::kv, {{root, 64}}});
        rs.push_back({"kv root cas and flush", owner::kv, {{root + 64, 24}}});
        const u64 item_heap = word(root + 32);
        auto items = ferrite::alloc::buddy_heap::open(p, item_heap);
        heap_regions("item heap", owner::kv, items, item_heap, rs, offsets);
        for (const auto& b : items.blocks()) {
            if (b.state != ferrite::alloc::block_state::live) continue;
            kv::item_header h;
            const u64 at = item_heap + b.offset;
            std::memcpy(&h, base + at, sizeof h);
            headers.ranges.push_back({at, sizeof h});
            keys.ranges.push_back({at + sizeof h, h.key_length});
            if (h.value_length != 0) values.ranges.push_back({at + sizeof h + h.key_length, h.value_length});
        }
    } else {
        u64 anchor = 0;
        for (const auto& e : directory.entries())
            if (e.name_view() == "kv") anchor = e.anchor;
        if (anchor == 0) throw std::runtime_error("kv image: no program image 'kv' in the catalog");
        // The program image's block (checkpoint/image_store.hpp, epoch_log.hpp): a header line
        // (magic, version, threads, base, log_bytes, image_bytes, checksum), the log region's
        // identity line and epoch lines, the thread logs, the persistent image.
        const u64 threads = word(anchor + 8) >> 32, log_bytes = word(anchor + 24);
        rs.push_back({"program image header", owner::kv, {{anchor, 64}}});
        rs.push_back({"program image log identity", owner::kv, {{anchor + 64, 64}}});
        rs.push_back({"program image epochs", owner::kv, {{anchor + 128, 8}, {anchor + 192, 8}}});
        region logs{"program image log records", owner::kv, {}};
        for (u64 t = 0; t < threads; ++t) logs.ranges.push_back({anchor + 256 + t * log_bytes, 1024});
        rs.push_back(logs);
        const u64 img = anchor + 256 + threads * log_bytes;  // the persistent image: image offsets count from here
        // Its first page: 32 roots of 64 bytes (name, offset), then the allocator (bump, one
        // free-list head per size class).
        region roots{"program image roots", owner::kv, {}};
        u64 table = 0;
        for (u64 r = 0; r < 32; ++r) {
            const char* name = reinterpret_cast<const char*>(base + img + 64 * r);
            if (name[0] == '\0') continue;
            roots.ranges.push_back({img + 64 * r, 64});
            if (std::string_view(name, strnlen(name, 48)) == "ferrite-kv") table = word(img + 64 * r + 48);
        }
        rs.push_back(roots);
        rs.push_back({"program image allocator", owner::kv, {{img + 2048, 8 * 78}}});
        region free_blocks{"program image free blocks", owner::kv, {}};
        for (u64 c = 1; c < 77; ++c) {  // free_heads[c] follows the bump word
            for (u64 at = word(img + 2048 + 8 + 8 * c), n = 0; at != 0 && n < 64; at = word(img + at), ++n) {
                free_blocks.ranges.push_back({img + at, 8});
                offsets.insert(at);
            }
        }
        if (!free_blocks.ranges.empty()) rs.push_back(free_blocks);
        if (table == 0) throw std::runtime_error("kv image: no root 'ferrite-kv' in the program image");
        // The table (cpnvm_table.hpp): its identity line, last_cas, the flush words; the
        // bucket words that head a chain, and the first few empty ones.
        rs.push_back({"kv table", owner::kv, {{img + table, 64}, {img + table + 64, 8}, {img + table + 128, 16}}});
        offsets.insert(table);
        kv::cp_table t;
        std::memcpy(&t, base + img + table, sizeof t);
        offsets.insert(t.buckets);
        region buckets{"kv buckets", owner::kv, {{img + t.buckets, 32}}};
        for (u64 b = 0; b < t.bucket_count; ++b) {
            for (u64 at = word(img + t.buckets + 8 * b); at != 0;) {
                if (at == word(img + t.buckets + 8 * b)) buckets.ranges.push_back({img + t.buckets + 8 * b, 8});
                kv::cp_item it;
                std::memcpy(&it, base + img + at, sizeof it);
                offsets.insert(at);
                headers.ranges.push_back({img + at, sizeof it});
                keys.ranges.push_back({img + at + sizeof it, it.key_length});
                if (it.value_length != 0) values.ranges.push_back({img + at + sizeof it + it.key_length, it.value_length});
                at = it.next;
            }
        }
        rs.push_back(buckets);
    }
    rs.push_back(headers);
    rs.push_back(keys);
    rs.push_back(values);
    finish_regions(im, offsets);
    p.close();
    fs::remove(path);
}

}  // namespace ferrite_fuzz
