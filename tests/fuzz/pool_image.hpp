// The pool images the pool-file fuzzer mutates, and where their metadata lies.
//
// build_images() makes, once per run, one ferrite::store on /dev/shm holding every kind of
// named object the catalog knows: vector<uint64_t>, vector<double>, a vector of a tagged
// user struct (FERRITE_PERSISTENT_TYPE), dfc_stack, dfc_queue, dfc_deque, dpfc_stack, dpfc_queue, the PFC stack,
// queue and deque, a SOFT durable_map and a link-free durable_set (hash layouts, 4 KiB
// areas: erased and superseded nodes among the live ones), a CpNvm program_image (8 KiB,
// one 4 KiB log, checkpointed every round: crash images fall inside its checkpoints, with
// committed epochs left to replay), filled and
// churned so that the vectors grew (freed arrays), the DFC node pools grew into the heap
// (chunk tables in use) and the catalog is a chain of several blocks: a fragmented heap. From
// it come several images (whole-file byte strings):
//   clean       the store closed: the clean-shutdown flag on, nothing to recover;
//   open        the file copied while the store is open after more operations: what a kill
//               between operations leaves (flag off, every confirm and log at rest);
//   crash@N     crash images of the crash simulator (ferrite/sim/session.hpp) taken before
//               persistence event N of further operations: a kill inside an operation, with
//               unpersisted lines dropped at random, so recovery has work (undo logs armed,
//               pending confirm slots, half-written DFC phases).
//
// regions_of() finds, from the image itself (read through the library, read-only), the
// byte ranges of the header identity, state line and roots table, the heap's header, undo log, confirm
// slots, block map and free-block links, every catalog block, and each object's header and
// data (vector headers with their swap logs, element arrays, DFC region headers and
// announcements, node chunks, a durable set's header block, area headers and node slots). The fuzzer picks a region first and a byte in it second, so
// the few hundred bytes of metadata get as many mutations as the megabyte of bulk data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/containers/dpfc_kinds.hpp"
#include "ferrite/containers/pfc_kinds.hpp"
#include "ferrite/containers/ordered_map_kind.hpp"
#include "ferrite/containers/sets_kind.hpp"

namespace ferrite_fuzz {

using pfc_stack = ferrite::stack<std::uint64_t, ferrite::alloc::buddy_heap>;
using pfc_queue = ferrite::queue<std::uint64_t, ferrite::alloc::buddy_heap>;
using pfc_deque = ferrite::deque<std::uint64_t, ferrite::alloc::buddy_heap>;
using dpfc_stack_u64 = ferrite::dpfc_stack<std::uint64_t>;
using dpfc_queue_u64 = ferrite::dpfc_queue<std::uint64_t>;
using soft_map = ferrite::durable_map<std::uint64_t, std::uint64_t, ferrite::use_soft>;
using linkfree_set = ferrite::durable_set<std::uint64_t, ferrite::use_link_free>;
using omap = ferrite::ordered_map<std::uint64_t, std::uint64_t>;
using omap16 = ferrite::ordered_map<ferrite::key16, std::uint64_t>;  // kind 14: the tree of 16-byte keys

// The ordered_map's options in the images and in the cases: a small tree (12 nodes of 320
// bytes, one writer shard, 24 log entries: a 16 KiB block), epochs ended by sync() only.
inline ferrite::ordered_map_options small_tree() {
    ferrite::ordered_map_options o;
    o.nodes = 12;
    o.epoch_length = std::chrono::milliseconds(0);
    o.shards = 1;
    o.log_entries = 24;
    return o;
}

// The durable sets' options in the images and in the cases: 4 KiB areas (63 node slots),
// so that the small pool holds several; one recovery thread.
inline ferrite::durable_set_options small_areas() {
    ferrite::durable_set_options o;
    o.area_bytes = 4096;
    o.recovery_threads = 1;
    return o;
}

// Whether a catalog entry is of the kind that opens as T.
template <class T>
bool is_kind(const ferrite::alloc::directory_entry& e) {
    return e.kind == ferrite::containers::named_kind<T>::id;
}

// What a region belongs to: failures in DFC regions are counted apart while the DFC
// validation is being finished (see pool_fuzz_test.cpp). `kv`: ferrite-kv's own structures
// (the soft engine's root, item heap and items; the cpnvm engine's program image, table and
// items).
enum class owner { pool, heap, catalog, vector, dfc, sets, index, kv, file };

// Which pool an image is of: the store holding every kind of named object, or a pool of one
// of ferrite-kv's durable engines (apps/kv), opened by the engine as the server opens it.
enum class family { objects, kv_soft, kv_cpnvm };

struct byte_range {
    std::uint64_t offset;
    std::uint64_t size;
};

struct region {
    std::string name;  // "header state", "heap map", "vector u64s header", "dfc_queue nodes", ...
    owner of;
    std::vector<byte_range> ranges;  // a mutation picks one range, then a position in it
};

struct image {
    std::string name;                    // "clean", "open", "crash@123"
    std::string bytes;                   // the whole file
    std::vector<region> regions;
    std::vector<std::uint64_t> offsets;  // in-pool offsets worth writing: blocks, objects, node numbers
    std::uint64_t data_top = 0;
    std::uint64_t heap_offset = 0;
    family of = family::objects;
};

inline constexpr const char* layout = "pool-fuzz";

// The objects every image holds (name, kind as `catalog::list` says it).
struct object_name {
    const char* name;
    const char* kind;
};
inline constexpr object_name objects[] = {{"u64s", "vector"},   {"f64s", "vector"},    {"ticks", "vector"},
                                          {"stack", "dfc_stack"}, {"queue", "dfc_queue"}, {"deque", "dfc_deque"},
                                          {"pfc-stack", "stack"}, {"pfc-queue", "queue"}, {"pfc-deque", "deque"},
                                          {"smap", "durable_map"}, {"lfset", "durable_set"}, {"omap", "ordered_map"},
                                          {"omap16", "ordered_map_k16"}};

// The user struct of the "ticks" vector.
struct tick {
    std::uint64_t time;
    double price;
    std::uint32_t volume;
};

// Builds the images in a scratch file in `dir` (removed again). Throws on any failure.
std::vector<image> build_images(const std::filesystem::path& dir, std::uint64_t seed);

// Fills image.regions, offsets, data_top and heap_offset from image.bytes (written to a
// scratch file in `dir` and opened read-only).
void find_regions(image& im, const std::filesystem::path& dir);

// ---- ferrite-kv's pools (apps/kv) ---------------------------------------------------------
//
// build_kv_images() makes a pool of the soft or the cpnvm engine (family kv_soft, kv_cpnvm)
// in the engine's own layout, small: the store is created here with a small heap and user
// area (soft) or a small program image with 32 KiB thread logs (cpnvm), and the engine runs
// on it through its constructor over pieces (the crash targets'), because the server's
// minimum sizes (32 MiB; 8 MiB per thread log) would make every case copy tens of MiB. It is
// filled with kv_items() (small, multi-line and 3000-byte values, flags, expiry times, an
// expired item, a counter, a touched, a deleted, a replaced and an appended item), so the
// item heap or the image allocator holds freed blocks among the live ones. Images:
//   clean   the engine and the store closed;
//   open    reopened with the engine's public constructor (as the server opens it), more
//           stores and deletes, the file copied while the engine is open (cpnvm: some of
//           them after the last committed epoch, so lost): what kill -9 leaves.
// Their regions: the pool header, the store's heap and catalog as for the objects images;
// soft: the index (a SOFT durable_map: header block, area headers, nodes), the kv root's
// identity line and CAS/flush words, the item heap (header, undo log, confirm slots, map,
// free links), every item's header, key and value; cpnvm: the program image's header, log
// identity, epoch words, log records, roots and allocator state (in the persistent image),
// free blocks, the table header, the bucket words, every item's header, key and value.
inline constexpr const char* kv_soft_layout = "ferrite-kv-1";         // apps/kv/soft_engine.cpp's
inline constexpr const char* kv_cpnvm_layout = "ferrite-kv-cpnvm-1";  // apps/kv/cpnvm_engine.cpp's

struct kv_item {
    std::string key, value;
    std::uint32_t flags;
    std::int64_t expires_at;  // absolute unix seconds, 0: never
};
// The items the images were filled with.
std::vector<kv_item> kv_items();
// Every key an image may hold (kv_items()' and the ones the "open" image's changes used):
// what a case reads back with get.
std::vector<std::string> kv_keys();

std::vector<image> build_kv_images(const std::filesystem::path& dir, family which);
void find_kv_regions(image& im, const std::filesystem::path& dir);

}  // namespace ferrite_fuzz
