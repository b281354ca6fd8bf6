// The fuzzer's pool images and their regions: see pool_image.hpp.
#include "pool_image.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/containers/program_image.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/containers/deque_layout.hpp"
#include "ferrite/containers/vector_layout.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/site_registry.hpp"

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
    auto sm = names.open<soft_map>("smap", small_areas());
    auto ls = names.open<linkfree_set>("lfset", small_areas());
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
        (void)q->enqueue(0, i);
        (void)(i % 2 ? dq->push_back(0, i) : dq->push_front(0, i));
        if (i % 3 == 2) {
            (void)u->pop_back();
            (void)t->pop_back();
            (void)st->pop(0);
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
    out.push_back({"clean", file_bytes(path), {}, {}, 0, 0});
    {
        auto s = ferrite::store::open(path, layout);
        churn(s, 60, 15);
        out.push_back({"open", file_bytes(path), {}, {}, 0, 0});  // the mapping is shared: the file as a kill leaves it
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
                           std::string(reinterpret_cast<const char*>(crash.data()), crash.size()), {}, {}, 0, 0});
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
    using ferrite::alloc::block_state;
    const fs::path path = dir / "regions.pool";
    write_bytes(path, im.bytes);
    auto p = ferrite::pmem::pool::inspect(path);
    const u64 ho = p.heap_offset();
    auto heap = ferrite::alloc::buddy_heap::open(p, ho);
    const auto& g = heap.geometry();
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
    rs.push_back({"heap header", owner::heap, {{ho, sizeof(ferrite::alloc::heap_header)}}});
    rs.push_back({"heap log control", owner::heap, {{ho + g.log_offset, 8}}});  // the tag word; the rest is padding
    rs.push_back({"heap log entries", owner::heap, {{ho + g.log_offset + 64, g.slots_offset - g.log_offset - 64}}});
    rs.push_back({"heap slots", owner::heap, {{ho + g.slots_offset, g.map_offset - g.slots_offset}}});
    rs.push_back({"heap map", owner::heap, {{ho + g.map_offset, g.arena_size / ferrite::alloc::granule}}});
    region links{"heap free links", owner::heap, {}};
    for (const auto& b : heap.blocks()) {
        offsets.insert(ho + b.offset);
        offsets.insert(b.offset);
        if (b.state == block_state::free) links.ranges.push_back({ho + b.offset, 16});
    }
    rs.push_back(links);

    auto directory = ferrite::alloc::name_directory::open_or_create(p, heap);
    region cat{"catalog", owner::catalog, {}};
    for (const void* b : directory.blocks()) {
        const u64 off = static_cast<u64>(static_cast<const std::byte*>(b) - base);
        offsets.insert(off);
        cat.ranges.push_back({off, 64 + 64 * std::min<u64>(word(off + 16), 63)});
    }
    rs.push_back(cat);
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
        } else if (is_kind<soft_map>(e) || is_kind<linkfree_set>(e)) {
            // The header block, then each area's line 0 and its node slots, as validation
            // finds them (a crash image's pending areas too: the heap is not recovered here,
            // and validation accepts allocation-pending blocks).
            rs.push_back({kind + " " + name + " header", owner::sets, {{anchor, block}}});
            region area_headers{kind + " " + name + " area headers", owner::sets, {}};
            region nodes{kind + " " + name + " nodes", owner::sets, {}};
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
    rs.push_back({"file", owner::file, {{0, im.bytes.size()}}});
    for (u64 o : std::vector<u64>(offsets.begin(), offsets.end())) {
        offsets.insert(o + 64);
        if (o >= 64) offsets.insert(o - 64);
    }
    im.offsets.assign(offsets.begin(), offsets.end());
    p.close();
    fs::remove(path);
}

}  // namespace ferrite_fuzz
