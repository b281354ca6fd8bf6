// The persistent buddy heap (see ferrite/alloc/buddy_heap.hpp): create/open, recovery and
// the four operations of the confirm protocol. Introspection is in heap_check.cpp.
#include "ferrite/alloc/buddy_heap.hpp"

#include <cstring>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::alloc {
namespace {

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

unsigned order_for(std::size_t bytes) noexcept {
    if (bytes <= granule) return min_order;
    return floor_log2(bytes - 1) + 1;
}

void check_pool_range(const pmem::pool& p, std::uint64_t offset, std::uint64_t size, const char* what) {
    if (offset % 64 != 0)
        throw usage_error(std::string(what) + ": heap offset " + std::to_string(offset) +
                          " is not 64-byte aligned; place the heap on a cache-line boundary");
    if (offset < pmem::pool_header_size || offset > p.size() || size > p.size() - offset)
        throw usage_error(std::string(what) + ": heap range [" + std::to_string(offset) + ", +" +
                          std::to_string(size) + ") is not inside the pool's data area (pool size " +
                          std::to_string(p.size()) + "); put the heap inside the pool's root");
}

}  // namespace

const char* to_string(block_state s) noexcept {
    switch (s) {
        case block_state::not_a_block: return "not a block";
        case block_state::free: return "free";
        case block_state::live: return "live";
        case block_state::allocation_pending: return "allocation pending";
        case block_state::deallocation_pending: return "deallocation pending";
    }
    return "?";
}

// ---- construction ----------------------------------------------------------------------

buddy_heap::buddy_heap(std::byte* base, const heap_geometry& g, bool read_only, phase ph)
    : base_(base), geometry_(g), read_only_(read_only), phase_(ph),
      log_(base, reinterpret_cast<log_control*>(base + g.log_offset),
           reinterpret_cast<log_entry*>(base + g.log_offset + sizeof(log_control)), g.log_capacity),
      table_(reinterpret_cast<std::uint64_t*>(base + g.slots_offset), g.slot_count),
      ws_(g.log_capacity), reserved_(g.slot_count, 0) {}

buddy_heap::buddy_heap(buddy_heap&& o) noexcept
    : base_(o.base_), geometry_(o.geometry_), read_only_(o.read_only_), phase_(o.phase_),
      log_(o.log_), table_(o.table_), ws_(std::move(o.ws_)), reserved_(std::move(o.reserved_)) {}

void buddy_heap::format(std::byte* base, const heap_geometry& g) {
    // Everything but the magic, durable; then the magic (commit point of create).
    std::memset(base, 0, g.arena_offset);
    auto* h = reinterpret_cast<heap_header*>(base);
    h->identity.version = heap_format_version;
    h->identity.geometry = g;
    h->identity.checksum = identity_checksum(h->identity);
    // The binary decomposition of the arena: aligned blocks of decreasing order.
    auto* map = reinterpret_cast<std::uint8_t*>(base + g.map_offset);
    std::uint64_t off = 0;
    for (unsigned k = static_cast<unsigned>(g.max_order) + 1; k-- > min_order;) {
        const auto size = std::uint64_t{1} << k;
        if ((g.arena_size & size) == 0) continue;
        const auto block = g.arena_offset + off;
        auto* l = reinterpret_cast<free_links*>(base + block);
        l->next = 0;
        l->prev = 0;
        h->free_heads[k] = block;
        map[off / granule] = static_cast<std::uint8_t>(free_tag | k);
        pmem::pwb(l);
        off += size;
    }
    pmem::pwb_range(base, g.arena_offset);
    pmem::pfence();  // PP: an empty heap is durable...
    h->identity.magic = heap_magic;
    pmem::pwb(&h->identity.magic);
    pmem::pfence();  // PP: ...before the magic says there is one
}

buddy_heap buddy_heap::create_in(void* region, std::uint64_t size, heap_options options) {
    if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
        throw usage_error("buddy_heap::create: the region must be 64-byte aligned");
    if (options.confirm_slots == 0)
        throw usage_error("buddy_heap::create: confirm_slots must be at least 1 (every allocation "
                          "needs a slot until it is confirmed)");
    const auto g = compute_geometry(size, options.confirm_slots);
    if (g.arena_size == 0)
        throw usage_error("buddy_heap::create: a region of " + std::to_string(size) + " bytes with " +
                          std::to_string(options.confirm_slots) +
                          " confirm slots leaves no room for a 64-byte block; give it more bytes");
    auto* base = static_cast<std::byte*>(region);
    format(base, g);
    return buddy_heap(base, g, false, phase::running);
}

buddy_heap buddy_heap::create(pmem::pool& p, std::uint64_t offset, std::uint64_t size, heap_options options) {
    if (p.read_only()) throw usage_error("buddy_heap::create: the pool is open read-only");
    check_pool_range(p, offset, size, "buddy_heap::create");
    auto heap = create_in(p.base() + offset, size, options);
    // The first heap of a pool becomes the pool's heap (found by `ferrite pool info/check`),
    // registered only once it is formatted and durable.
    if (p.heap_offset() == 0) p.register_heap(offset);
    return heap;
}

heap_geometry buddy_heap::validate(const std::byte* base, std::uint64_t available) {
    if (available < sizeof(heap_header))
        throw heap_error("no ferrite heap here: " + std::to_string(available) +
                         " bytes cannot hold a heap header; pass the offset the heap was created at");
    const auto& id = reinterpret_cast<const heap_header*>(base)->identity;
    if (id.magic != heap_magic)
        throw heap_error("no ferrite heap here (magic " + hex(id.magic) +
                         "): pass the offset the heap was created at, or create one with buddy_heap::create");
    if (id.version != heap_format_version)
        throw heap_error("heap format version " + std::to_string(id.version) + " is not supported (this is " +
                         std::to_string(heap_format_version) + "); use the ferrite release that created it");
    if (id.checksum != identity_checksum(id))
        throw heap_error("heap header checksum mismatch: the header was overwritten; restore the pool "
                         "from a backup");
    const auto& g = id.geometry;
    if (g.region_size > available)
        throw heap_error("heap claims " + std::to_string(g.region_size) + " bytes but only " +
                         std::to_string(available) + " follow it: the pool was truncated or the offset is wrong");
    if (g.slot_count == 0 || g != compute_geometry(g.region_size, g.slot_count))
        throw heap_error("heap header geometry is inconsistent: the heap is damaged; restore the pool "
                         "from a backup");
    return g;
}

buddy_heap buddy_heap::open_in(void* region, std::uint64_t size, bool read_only) {
    if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
        throw usage_error("buddy_heap::open: the region must be 64-byte aligned");
    auto* base = static_cast<std::byte*>(region);
    const auto g = validate(base, size);
    return buddy_heap(base, g, read_only, phase::needs_recovery);
}

buddy_heap buddy_heap::open(pmem::pool& p, std::uint64_t offset) {
    check_pool_range(p, offset, 0, "buddy_heap::open");
    return open_in(p.base() + offset, p.size() - offset, p.read_only());
}

// ---- recovery ----------------------------------------------------------------------------

void buddy_heap::recover() {
    std::lock_guard guard(lock_);
    if (phase_ != phase::needs_recovery) return;
    if (read_only_) throw usage_error("buddy_heap::recover: the pool is open read-only; open it read-write");
    log_.rollback(geometry_.region_size);
    for (std::uint64_t i = 0; i < table_.count(); ++i) {
        const auto v = *table_.slot(i);
        if (v == 0) continue;
        const auto st = state_locked(block_of(v));
        if ((kind_of(v) != slot_kind::allocation && kind_of(v) != slot_kind::deallocation) ||
            (st != block_state::allocation_pending && st != block_state::deallocation_pending))
            throw heap_error("confirm slot " + std::to_string(i) + " holds " + hex(v) +
                             ", which names no live block: the heap is damaged; restore the pool from a backup");
        reserved_[i] = 1;
    }
    phase_ = phase::clients_recovering;
}

void buddy_heap::finish_recovery() {
    std::lock_guard guard(lock_);
    if (phase_ == phase::needs_recovery)
        throw usage_error("buddy_heap::finish_recovery: call recover() first (and let every client recover)");
    if (phase_ == phase::running) return;
    for (std::uint64_t i = 0; i < table_.count(); ++i) {
        if (!reserved_[i]) continue;
        const auto v = *table_.slot(i);
        // Confirmed allocations were cleared; everything else is reclaimed: an unconfirmed
        // allocation is referenced by no client, a deallocation was promised.
        if (v != 0) release_locked(block_of(v), i);
        reserved_[i] = 0;
    }
    phase_ = phase::running;
}

bool buddy_heap::recovery_finished() const noexcept { return phase_ == phase::running; }

// ---- helpers -----------------------------------------------------------------------------

std::uint8_t buddy_heap::map_tag(std::uint64_t off) const noexcept {
    const auto gi = granule_of(off);
    return static_cast<std::uint8_t>(*map_word(gi) >> (8 * (gi % 8)));
}

std::uint8_t buddy_heap::planned_tag(std::uint64_t off) const noexcept {
    const auto gi = granule_of(off);
    return static_cast<std::uint8_t>(ws_.read(map_word(gi)) >> (8 * (gi % 8)));
}

void buddy_heap::plan_tag(std::uint64_t off, std::uint8_t tag) {
    const auto gi = granule_of(off);
    auto* w = map_word(gi);
    const auto shift = 8 * (gi % 8);
    const auto v = (ws_.read(w) & ~(std::uint64_t{0xff} << shift)) | (std::uint64_t{tag} << shift);
    ws_.write(w, v);
}

std::uint64_t buddy_heap::arena_offset_of(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const auto lo = reinterpret_cast<std::uintptr_t>(base_ + geometry_.arena_offset);
    if (a < lo || a >= lo + geometry_.arena_size || (a - lo) % granule != 0) return 0;
    return geometry_.arena_offset + (a - lo);
}

block_state buddy_heap::state_locked(std::uint64_t off) const noexcept {
    if (off < geometry_.arena_offset || off >= geometry_.arena_offset + geometry_.arena_size ||
        (off - geometry_.arena_offset) % granule != 0)
        return block_state::not_a_block;
    const auto tag = map_tag(off);
    if (tag & free_tag) return block_state::free;
    if (!(tag & live_tag)) return block_state::not_a_block;
    const auto slot = table_.find(off);
    if (!slot) return block_state::live;
    return kind_of(*table_.slot(*slot)) == slot_kind::allocation ? block_state::allocation_pending
                                                                 : block_state::deallocation_pending;
}

void buddy_heap::require_writable(const char* what) const {
    if (read_only_) throw usage_error(std::string(what) + ": the heap's pool is open read-only");
    if (phase_ == phase::needs_recovery)
        throw usage_error(std::string(what) + ": the heap was opened after a restart; call recover() first");
}

std::string buddy_heap::describe(const void* p) const {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
}

block_state buddy_heap::state(const void* p) const {
    std::lock_guard guard(lock_);
    const auto off = arena_offset_of(p);
    return off ? state_locked(off) : block_state::not_a_block;
}

std::size_t buddy_heap::block_size(const void* p) const {
    std::lock_guard guard(lock_);
    const auto off = arena_offset_of(p);
    if (!off) return 0;
    const auto tag = map_tag(off);
    if (!(tag & live_tag)) return 0;
    return std::size_t{1} << (tag & order_mask);
}

// ---- operations --------------------------------------------------------------------------

void* buddy_heap::allocate(std::size_t bytes) {
    if (bytes == 0)
        throw usage_error("buddy_heap::allocate(0): a zero-byte block cannot be told apart from "
                          "others; ask for at least 1 byte");
    if (bytes > max_allocation())
        throw usage_error("buddy_heap::allocate(" + std::to_string(bytes) + "): larger than the largest block " +
                          "this heap can hold (" + std::to_string(max_allocation()) +
                          " bytes); create a bigger heap or split the request");
    const unsigned k = order_for(bytes);
    std::lock_guard guard(lock_);
    require_writable("buddy_heap::allocate");
    unsigned j = k;
    while (j <= geometry_.max_order && *head(j) == 0) ++j;
    if (j > geometry_.max_order) {
        const auto u = usage_locked();
        throw out_of_memory("buddy heap exhausted: no free block of " + std::to_string(std::uint64_t{1} << k) +
                            " bytes for allocate(" + std::to_string(bytes) + ") (" + std::to_string(u.bytes_free) +
                            " bytes free, largest free block " + std::to_string(u.largest_free) +
                            "); free memory or create a bigger heap");
    }
    const auto slot = table_.find_empty(reserved_);
    if (!slot)
        throw confirm_table_full("buddy_heap::allocate: all " + std::to_string(table_.count()) +
                                 " confirm slots hold unconfirmed allocations or deallocations; call "
                                 "confirm_allocation / confirm_deallocation first, or create the heap with "
                                 "more confirm_slots");

    // REQUEST (Alg 5.12): unlink the first free block of order j...
    ws_.clear();
    const auto block = *head(j);
    const auto next = ws_.read(&links(block)->next);
    ws_.write(head(j), next);
    if (next) ws_.write(&links(next)->prev, 0);
    // ...split it down to order k, pushing each upper half on its free list...
    for (unsigned m = j; m-- > k;) {
        const auto buddy = block + (std::uint64_t{1} << m);
        const auto first = ws_.read(head(m));
        ws_.write(&links(buddy)->next, first);
        ws_.write(&links(buddy)->prev, 0);
        if (first) ws_.write(&links(first)->prev, buddy);
        ws_.write(head(m), buddy);
        plan_tag(buddy, static_cast<std::uint8_t>(free_tag | m));
    }
    // ...mark it live at order k and pending in its slot, all in one undo-logged step.
    plan_tag(block, static_cast<std::uint8_t>(live_tag | k));
    ws_.write(table_.slot(*slot), make_slot(block, slot_kind::allocation));
    log_.commit(op_kind::request, ws_);  // LP/PP
    return base_ + block;
}

void buddy_heap::confirm_allocation(void* p) {
    std::lock_guard guard(lock_);
    require_writable("buddy_heap::confirm_allocation");
    confirm_allocation_locked(p);
}

void buddy_heap::confirm_allocation_locked(void* p) {
    const auto off = arena_offset_of(p);
    const auto st = off ? state_locked(off) : block_state::not_a_block;
    switch (st) {
        case block_state::allocation_pending:
            log_.flush_clear();
            table_.store(*table_.find(off), 0);  // LP/PP
            return;
        case block_state::live:                  // confirmed before (e.g. before a crash)
        case block_state::deallocation_pending:  // confirmed, and since deallocated
            return;
        case block_state::free:
            throw usage_error("buddy_heap::confirm_allocation(" + describe(p) +
                              "): the block is free: it was never confirmed and has been reclaimed "
                              "(confirm before finish_recovery) or was already deallocated");
        case block_state::not_a_block: break;
    }
    throw usage_error("buddy_heap::confirm_allocation(" + describe(p) +
                      "): not a block allocated from this heap; pass the pointer allocate() returned");
}

void buddy_heap::deallocate(void* p) {
    std::lock_guard guard(lock_);
    require_writable("buddy_heap::deallocate");
    deallocate_locked(p);
}

void buddy_heap::deallocate_locked(void* p) {
    const auto off = arena_offset_of(p);
    const auto st = off ? state_locked(off) : block_state::not_a_block;
    switch (st) {
        case block_state::deallocation_pending: return;  // repeated (e.g. after a crash)
        case block_state::allocation_pending:
            // Never confirmed: turn its slot into a deallocation (one word, no new slot).
            log_.flush_clear();
            table_.store(*table_.find(off), make_slot(off, slot_kind::deallocation));  // LP/PP
            return;
        case block_state::live: {
            const auto slot = table_.find_empty(reserved_);
            if (!slot)
                throw confirm_table_full("buddy_heap::deallocate: all " + std::to_string(table_.count()) +
                                         " confirm slots hold unconfirmed allocations or deallocations; "
                                         "call confirm_allocation / confirm_deallocation first, or create "
                                         "the heap with more confirm_slots");
            log_.flush_clear();
            table_.store(*slot, make_slot(off, slot_kind::deallocation));  // LP/PP
            return;
        }
        case block_state::free:
            throw usage_error("buddy_heap::deallocate(" + describe(p) +
                              "): double free: the block is already free; the heap is unchanged");
        case block_state::not_a_block: break;
    }
    throw usage_error("buddy_heap::deallocate(" + describe(p) +
                      "): not a live block of this heap (a pointer into the middle of a block, from "
                      "another heap, or never allocated); pass the pointer allocate() returned");
}

void buddy_heap::confirm_replacement(void* fresh, void* old) {
    std::lock_guard guard(lock_);
    require_writable("buddy_heap::confirm_replacement");
    const auto fresh_off = arena_offset_of(fresh), old_off = arena_offset_of(old);
    if (fresh_off && fresh_off == old_off)
        throw usage_error("buddy_heap::confirm_replacement(" + describe(fresh) +
                          ", the same block): a block cannot replace itself; pass the new block and the old one");
    const auto fresh_state = fresh_off ? state_locked(fresh_off) : block_state::not_a_block;
    const auto old_state = old_off ? state_locked(old_off) : block_state::not_a_block;
    if (fresh_state == block_state::allocation_pending && old_state == block_state::live) {
        // The common case: fresh's slot becomes old's deallocation, one word (no free slot needed).
        log_.flush_clear();
        table_.store(*table_.find(fresh_off), make_slot(old_off, slot_kind::deallocation));  // LP/PP
        return;
    }
    // Repeated after a crash (fresh live, old pending deallocation: both no-ops), or a block
    // confirmed or deallocated on its own: the two steps, each of which checks its block
    // first. Neither needs a free slot unless fresh was confirmed and old is still live.
    if (old_state == block_state::free || old_state == block_state::not_a_block) deallocate_locked(old);  // throws
    confirm_allocation_locked(fresh);
    deallocate_locked(old);
}

void buddy_heap::confirm_deallocation(void* p) {
    std::lock_guard guard(lock_);
    require_writable("buddy_heap::confirm_deallocation");
    const auto off = arena_offset_of(p);
    if (!off)
        throw usage_error("buddy_heap::confirm_deallocation(" + describe(p) +
                          "): not a block of this heap; pass the pointer given to deallocate()");
    const auto slot = table_.find(off);
    // No deallocation pending: confirmed already (perhaps before a crash). Nothing to do.
    if (!slot || kind_of(*table_.slot(*slot)) != slot_kind::deallocation) return;
    release_locked(off, *slot);
}

// RELEASE (Alg 5.13) of the live block at `off`, clearing `slot` in the same undo-logged step.
void buddy_heap::release_locked(std::uint64_t off, std::uint64_t slot) {
    const auto tag = map_tag(off);
    if (!(tag & live_tag))
        throw heap_error("buddy heap: confirm slot " + std::to_string(slot) + " names offset " +
                         std::to_string(off) + ", which is not a live block: the heap is damaged");
    ws_.clear();
    const auto arena = geometry_.arena_offset;
    auto cur = off;
    unsigned m = tag & order_mask;
    plan_tag(off, 0);
    // Merge with free buddies upward.
    while (m < geometry_.max_order) {
        const auto rel = (cur - arena) ^ (std::uint64_t{1} << m);
        if (rel + (std::uint64_t{1} << m) > geometry_.arena_size) break;  // no buddy inside the arena
        const auto buddy = arena + rel;
        if (planned_tag(buddy) != (free_tag | m)) break;
        const auto prev = ws_.read(&links(buddy)->prev);
        const auto next = ws_.read(&links(buddy)->next);
        if (prev)
            ws_.write(&links(prev)->next, next);
        else
            ws_.write(head(m), next);
        if (next) ws_.write(&links(next)->prev, prev);
        plan_tag(buddy, 0);
        cur = std::min(cur, buddy);
        ++m;
    }
    // Insert the merged block at the head of its list.
    const auto first = ws_.read(head(m));
    ws_.write(&links(cur)->next, first);
    ws_.write(&links(cur)->prev, 0);
    if (first) ws_.write(&links(first)->prev, cur);
    ws_.write(head(m), cur);
    plan_tag(cur, static_cast<std::uint8_t>(free_tag | m));
    ws_.write(table_.slot(slot), 0);
    log_.commit(op_kind::release, ws_);  // LP/PP
}

}  // namespace ferrite::alloc
