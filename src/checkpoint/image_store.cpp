// Where a CpNvm program image lives in a pool (see ferrite/checkpoint/image_store.hpp).
#include "ferrite/checkpoint/image_store.hpp"

#include <cstddef>
#include <cstring>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::checkpoint {
namespace {

constexpr std::uint64_t magic = 0x31474d4950434546ull;  // "FECPIMG1"
constexpr std::uint32_t version = 1;
constexpr std::uint64_t header_bytes = 64;

struct image_header {
    std::uint64_t magic;
    std::uint32_t version;
    std::uint32_t threads;
    std::uint64_t base;
    std::uint64_t log_bytes;
    std::uint64_t image_bytes;
    std::uint64_t checksum;  // FNV-1a 64 of the fields above
};
static_assert(sizeof(image_header) <= header_bytes);

std::uint64_t checksum_of(const image_header& h) noexcept { return pmem::fnv1a64(&h, offsetof(image_header, checksum)); }

[[noreturn]] void damaged(std::uint64_t anchor, const std::string& what) {
    throw_damaged(pool_errc::damaged_object, "program image", "",
                  "at pool offset " + std::to_string(anchor) + ": " + what);
}

// The block `anchor` names, checked to be a block of the heap a create left (live or still
// pending), with `usable` bytes.
std::byte* image_block(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor,
                       std::uint64_t& usable) {
    if (anchor == 0) throw error("no program image at pool offset 0 of '" + pool.path().string() + "'; create it first");
    const std::uint64_t in_pool = alloc::heap_in_pool(pool, heap, "program image");
    const auto& g = heap.geometry();
    if (anchor % 64 != 0 || anchor < in_pool || anchor - in_pool < g.arena_offset ||
        anchor - in_pool >= g.arena_offset + g.arena_size)
        damaged(anchor, "the anchor is not the offset of a block of the heap");
    const void* p = heap.at(anchor - in_pool);
    const auto st = heap.state(p);
    if (st != alloc::block_state::live && st != alloc::block_state::allocation_pending)
        damaged(anchor, std::string("the anchor names no block an image can own (the heap says: ") +
                            alloc::to_string(st) + ")");
    usable = heap.block_size(p);
    return static_cast<std::byte*>(const_cast<void*>(p));
}

image_shape read_header(std::byte* block, std::uint64_t usable, std::uint64_t anchor) {
    if (usable < header_bytes) damaged(anchor, "the block is too small for an image header");
    image_header h;
    std::memcpy(&h, block, sizeof h);
    if (h.magic != magic) damaged(anchor, "the block does not start with a program image's magic number");
    if (h.version != version)
        damaged(anchor, "format version " + std::to_string(h.version) + ", this build reads " + std::to_string(version));
    if (h.checksum != checksum_of(h)) damaged(anchor, "the header's checksum does not match");
    return {h.base, {h.threads, h.log_bytes, h.image_bytes}};
}

}  // namespace

FERRITE_FLOW_ROOT image_store image_store::create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                                const image_shape& shape) {
    const std::uint64_t bytes = header_bytes + region_bytes(shape.geometry);  // usage_error if out of range
    if (bytes > heap.max_allocation())
        throw usage_error("program image: " + std::to_string(bytes) + " bytes (image, logs, header) exceed the heap's "
                          "largest block (" + std::to_string(heap.max_allocation()) + "): make the pool larger");
    const std::uint64_t in_pool = alloc::heap_in_pool(pool, heap, "program image");
    auto* block = static_cast<std::byte*>(heap.allocate(bytes));  // pending; may throw, nothing allocated
    image_header h{magic, version, shape.geometry.threads, shape.base, shape.geometry.log_bytes,
                   shape.geometry.image_bytes, 0};
    h.checksum = checksum_of(h);
    std::memset(block, 0, header_bytes);
    std::memcpy(block, &h, sizeof h);
    pmem::pwb(block);
    auto log = epoch_log::create(block + header_bytes, bytes - header_bytes, shape.geometry);  // ends with a pfence
    anchor = in_pool + heap.offset_of(block);  // the commit point
    pmem::pwb(&anchor);
    pmem::pfence();  // PP: the anchor durable before the heap forgets its pending slot
    heap.confirm_allocation(block);
    return image_store(shape, std::move(log));
}

image_store image_store::open(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor) {
    std::uint64_t usable = 0;
    std::byte* block = image_block(pool, heap, anchor, usable);
    const auto shape = read_header(block, usable, anchor);
    return image_store(shape, epoch_log::open(block + header_bytes, usable - header_bytes));
}

void image_store::confirm(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor) {
    std::uint64_t usable = 0;
    std::byte* block = image_block(pool, heap, anchor, usable);
    if (heap.state(block) == alloc::block_state::allocation_pending) heap.confirm_allocation(block);
}

std::vector<std::uint64_t> image_store::validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                                 std::uint64_t anchor) {
    auto s = open(pool, heap, anchor);
    s.log().validate_records();
    return {anchor};
}

}  // namespace ferrite::checkpoint
