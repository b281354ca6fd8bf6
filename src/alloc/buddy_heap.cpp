// The persistent buddy heap (see ferrite/alloc/buddy_heap.hpp): create/open, recovery and
// the four operations of the confirm protocol. Introspection is in heap_check.cpp.
#include "ferrite/alloc/buddy_heap.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::alloc {
namespace {

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// Every validation failure: what is wrong and where, and that nothing was written.
[[noreturn]] void damaged(const std::string& what) {
    throw heap_error("buddy heap is damaged: " + what + "; nothing was changed: restore the pool from a copy");
}

std::string list_name(unsigned k) { return "free list " + std::to_string(k); }

std::string who(const char* role, std::uint64_t of) {
    return of ? std::string(role) + " " + hex(of) : std::string(role);
}

// What a map byte says, for messages.
std::string describe_tag(std::uint8_t tag) {
    const auto k = std::to_string(tag & order_mask);
    if (tag == 0) return "inside another block (map byte 0)";
    if ((tag & ~order_mask) == free_tag) return "a free block of order " + k;
    if ((tag & ~order_mask) == live_tag) return "a live block of order " + k;
    return "marked by the damaged map byte " + hex(tag);
}

constexpr std::uint64_t no_slot = ~std::uint64_t{0};

// Clears the write set however the scope is left: a validation that throws part-way through
// planning leaves nothing planned behind (observers read the map through it).
struct clear_on_exit {
    write_set& ws;
    ~clear_on_exit() { ws.clear(); }
};

unsigned order_for(std::size_t bytes) noexcept {
    if (bytes <= granule) return min_order;
    return floor_log2(bytes - 1) + 1;
}

void check_pool_range(const pmem::pool_ref& p, std::uint64_t offset, std::uint64_t size, const char* what) {
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
      ws_(g.log_capacity), reserved_(g.slot_count, 0) {
    if (ph == phase::needs_recovery) check_region();  // the log, the heads and the slots: O(log + orders + slots)
}

FERRITE_FLOW_ROOT void buddy_heap::format(std::byte* base, const heap_geometry& g) {
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

heap_geometry buddy_heap::format_new(void* region, std::uint64_t size, heap_options options) {
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
    format(static_cast<std::byte*>(region), g);
    return g;
}

buddy_heap buddy_heap::create_in(void* region, std::uint64_t size, heap_options options) {
    const auto g = format_new(region, size, options);
    return buddy_heap(static_cast<std::byte*>(region), g, false, phase::running);
}

buddy_heap buddy_heap::create(const pmem::pool_ref& p, std::uint64_t offset, std::uint64_t size, heap_options options) {
    if (p.read_only()) throw usage_error("buddy_heap::create: the pool is open read-only");
    check_pool_range(p, offset, size, "buddy_heap::create");
    auto* region = p.base() + offset;
    const auto g = format_new(region, size, options);
    // The first heap of a pool becomes the pool's heap (found by `ferrite pool info/check`),
    // registered only once it is formatted and durable.
    if (p.heap_offset() == 0) p.register_heap(offset);
    return buddy_heap(region, g, false, phase::running);
}

heap_geometry buddy_heap::validate(const std::byte* base, std::uint64_t available) {
    if (available < sizeof(heap_header))
        throw heap_error("no ferrite heap here: " + std::to_string(available) +
                         " bytes cannot hold a heap header; pass the offset the heap was created at");
    const auto& id = reinterpret_cast<const heap_header*>(base)->identity;
    // A wrong magic or version is damage too when the rest of the identity checks out.
    if (id.magic != heap_magic)
        throw heap_error("no ferrite heap here (magic " + hex(id.magic) +
                         "): pass the offset the heap was created at, or create one with buddy_heap::create" +
                         (id.checksum == identity_checksum(id)
                              ? "; the rest of a heap header is here: if this is its offset, the header is "
                                "damaged: restore the pool from a copy"
                              : ""));
    if (id.version != heap_format_version)
        throw heap_error("heap format version " + std::to_string(id.version) + " is not supported (this is " +
                         std::to_string(heap_format_version) + "); use the ferrite release that created it" +
                         (id.checksum != identity_checksum(id)
                              ? ", or, as its checksum does not match, the header is damaged: restore the "
                                "pool from a copy"
                              : ""));
    if (id.checksum != identity_checksum(id))
        throw heap_error("heap header checksum mismatch: the header was overwritten; restore the pool "
                         "from a copy");
    const auto& g = id.geometry;
    if (g.region_size > available)
        throw heap_error("heap claims " + std::to_string(g.region_size) + " bytes but only " +
                         std::to_string(available) + " follow it: the pool was truncated or the offset is wrong");
    if (g.slot_count == 0 || g != compute_geometry(g.region_size, g.slot_count))
        throw heap_error("heap header geometry is inconsistent: the heap is damaged; restore the pool "
                         "from a copy");
    return g;
}

buddy_heap buddy_heap::open_in(void* region, std::uint64_t size, bool read_only) {
    if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
        throw usage_error("buddy_heap::open: the region must be 64-byte aligned");
    auto* base = static_cast<std::byte*>(region);
    return buddy_heap(base, validate(base, size), read_only, phase::needs_recovery);  // checks the region
}

buddy_heap buddy_heap::open(const pmem::pool_ref& p, std::uint64_t offset) {
    check_pool_range(p, offset, 0, "buddy_heap::open");
    return open_in(p.base() + offset, p.size() - offset, p.read_only());
}

// ---- recovery ----------------------------------------------------------------------------

void buddy_heap::recover() {
    std::lock_guard guard(lock_);
    if (phase_ != phase::needs_recovery) return;
    if (read_only_) throw usage_error("buddy_heap::recover: the pool is open read-only; open it read-write");
    // Validate the log and the state its rollback leads to before writing anything (open
    // did so too; this repeats it in case the region changed since).
    check_region();
    log_.rollback(geometry_);
    for (std::uint64_t i = 0; i < table_.count(); ++i)
        if (*table_.slot(i) != 0) reserved_[i] = 1;  // validated by check_region
    phase_ = phase::clients_recovering;
}

void buddy_heap::finish_recovery() {
    std::lock_guard guard(lock_);
    if (phase_ == phase::needs_recovery)
        throw usage_error("buddy_heap::finish_recovery: call recover() first (and let every client recover)");
    if (phase_ == phase::running) return;
    {
        // Plan every release one after the other in one write set (each reads what the ones
        // before it planned), validating as they go: a damaged heap throws here, before the
        // first release writes anything.
        clear_on_exit guard_plan{ws_};
        ws_.clear();
        for (std::uint64_t i = 0; i < table_.count(); ++i)
            if (const auto v = *table_.slot(i); reserved_[i] && v != 0) plan_release(block_of(v), i);
    }
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

block_state buddy_heap::state_locked(std::uint64_t off) const {
    if (off < geometry_.arena_offset || off >= geometry_.arena_offset + geometry_.arena_size ||
        (off - geometry_.arena_offset) % granule != 0)
        return block_state::not_a_block;
    const auto tag = map_tag(off);
    if (tag == 0) return block_state::not_a_block;
    const auto kind = tag & ~order_mask;
    if ((kind != free_tag && kind != live_tag) || !block_fits(off, tag & order_mask))
        damaged("the block map says the block at offset " + hex(off) + " is " + describe_tag(tag) +
                ", which is not a block of this heap (orders " + std::to_string(min_order) + ".." +
                std::to_string(geometry_.max_order) + ", aligned to their size, inside the arena)");
    if (kind == free_tag) return block_state::free;
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
    if (const auto st = state_locked(off); st == block_state::not_a_block || st == block_state::free) return 0;
    // A size the caller will write up to: the order is checked against the map inside it.
    return std::size_t{1} << live_order(off, "block_size()", no_slot);
}

// ---- validation --------------------------------------------------------------------------

bool buddy_heap::block_fits(std::uint64_t off, unsigned k) const noexcept {
    if (k < min_order || k > geometry_.max_order || off < geometry_.arena_offset) return false;
    const auto rel = off - geometry_.arena_offset;
    const auto size = std::uint64_t{1} << k;
    return rel % size == 0 && rel < geometry_.arena_size && size <= geometry_.arena_size - rel;
}

// `off` (the `role` of block `of`, or of list k when `of` is 0) is a free block of order k:
// inside the arena, aligned to 2^k from its start, and free at order k in the map.
void buddy_heap::require_free_block(std::uint64_t off, unsigned k, const char* role, std::uint64_t of) const {
    if (!block_fits(off, k))
        damaged(list_name(k) + ": " + who(role, of) + " is offset " + hex(off) +
                ", outside the arena or not aligned to the list's block size (" +
                std::to_string(std::uint64_t{1} << k) + " bytes)");
    if (const auto tag = planned_tag(off); tag != (free_tag | k))
        damaged(list_name(k) + ": " + who(role, of) + " is offset " + hex(off) + ", which the block map says is " +
                describe_tag(tag) + ", not a free block of order " + std::to_string(k));
}

// The head of list k is 0 or a free block of order k with no prev.
void buddy_heap::check_head(unsigned k) const {
    const auto first = ws_.read(head(k));
    if (first == 0) return;
    if (k < min_order || k > geometry_.max_order)
        damaged(list_name(k) + " has head " + hex(first) + ", but this heap has no blocks of order " +
                std::to_string(k) + " (orders " + std::to_string(min_order) + ".." +
                std::to_string(geometry_.max_order) + ")");
    require_free_block(first, k, "its head", 0);
    if (const auto prev = ws_.read(&links(first)->prev); prev != 0)
        damaged(list_name(k) + ": its head " + hex(first) + " has prev " + hex(prev) + " (a list's head has none)");
}

// Before block `off` is taken off list k (hand-out, merge): it is a free block of order k,
// the head exactly when it has no prev, and its neighbours are free blocks of order k whose
// links name it back. O(1): the words the unlink writes, and two map bytes.
void buddy_heap::check_unlink(std::uint64_t off, unsigned k) const {
    require_free_block(off, k, "the block being unlinked", 0);
    const auto prev = ws_.read(&links(off)->prev);
    const auto next = ws_.read(&links(off)->next);
    const auto first = ws_.read(head(k));
    if ((first == off) != (prev == 0))
        damaged(list_name(k) + ": block " + hex(off) + " has prev " + hex(prev) + " but the list's head is " +
                hex(first) + " (exactly the head has no prev)");
    if (prev == off || next == off || (prev != 0 && prev == next))
        damaged(list_name(k) + ": block " + hex(off) + " has prev " + hex(prev) + " and next " + hex(next) +
                " (a cycle)");
    if (prev != 0) {
        require_free_block(prev, k, "the prev of", off);
        if (const auto back = ws_.read(&links(prev)->next); back != off)
            damaged(list_name(k) + ": block " + hex(off) + " has prev " + hex(prev) + ", whose next is " + hex(back) +
                    " (links not mirrored)");
    }
    if (next != 0) {
        require_free_block(next, k, "the next of", off);
        if (const auto back = ws_.read(&links(next)->prev); back != off)
            damaged(list_name(k) + ": block " + hex(off) + " has next " + hex(next) + ", whose prev is " + hex(back) +
                    " (links not mirrored)");
    }
}

// The order of the live block at `off`, used as a size: the map byte is live at an order the
// arena has, aligned, inside the arena, and no block starts at off + 2^m (m < order), where
// a block of a smaller true order would have its buddy (a map byte whose order bits grew
// would otherwise free, or hand a client, its neighbours). O(order) map bytes.
unsigned buddy_heap::live_order(std::uint64_t off, const char* what, std::uint64_t slot) const {
    const auto tag = planned_tag(off);
    const unsigned k = tag & order_mask;
    const auto context = [&] {
        std::string text(what);
        if (slot != no_slot) text.append(" ").append(std::to_string(slot));
        return text;
    };
    if ((tag & ~order_mask) != live_tag || !block_fits(off, k))
        damaged(context() + ": the block map says the block at offset " + hex(off) + " is " +
                describe_tag(tag) + ", not a live block of an order this heap has, aligned to its size");
    for (unsigned m = min_order; m < k; ++m)
        if (const auto inner = off + (std::uint64_t{1} << m); planned_tag(inner) != 0)
            damaged(context() + ": the block map says the live block at offset " + hex(off) + " has order " +
                    std::to_string(k) + ", but " + describe_tag(planned_tag(inner)) + " starts inside it at " +
                    hex(inner));
    return k;
}

// At open and recover(): the log (armed_entries), then the heads and the slots as the
// rollback will leave them (the log's before-images laid over the region in ws_). Reads
// only; O(log^2 + orders + slots log slots), independent of the arena's size.
void buddy_heap::check_region() {
    clear_on_exit guard{ws_};
    ws_.clear();
    const auto armed = log_.armed_entries(geometry_);
    for (auto i = armed.size(); i-- > 0;)
        ws_.write(reinterpret_cast<std::uint64_t*>(base_ + armed[i].offset), armed[i].old);
    for (unsigned k = 0; k < order_limit; ++k) check_head(k);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> named;  // block, slot
    const auto arena_end = geometry_.arena_offset + geometry_.arena_size;
    for (std::uint64_t i = 0; i < table_.count(); ++i) {
        const auto v = ws_.read(table_.slot(i));
        if (v == 0) continue;
        const auto off = block_of(v);
        const auto where = [&] { return "confirm slot " + std::to_string(i) + " holds " + hex(v); };
        if (kind_of(v) != slot_kind::allocation && kind_of(v) != slot_kind::deallocation)
            damaged(where() + ", whose kind (low two bits) is neither allocation (1) nor deallocation (2)");
        if (off < geometry_.arena_offset || off >= arena_end || (off - geometry_.arena_offset) % granule != 0)
            damaged(where() + ", which names no block start inside the arena");
        const auto tag = planned_tag(off);
        if ((tag & ~order_mask) != live_tag || !block_fits(off, tag & order_mask))
            damaged(where() + ", which names offset " + hex(off) + ": the block map says it is " + describe_tag(tag) +
                    " (a pending block is a live one)");
        named.emplace_back(off, i);
    }
    std::sort(named.begin(), named.end());
    for (std::size_t i = 1; i < named.size(); ++i)
        if (named[i].first == named[i - 1].first)
            damaged("confirm slots " + std::to_string(named[i - 1].second) + " and " + std::to_string(named[i].second) +
                    " both name the block at offset " + hex(named[i].first));
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

    // Validate what the hand-out reads before planning a write: the head is a free block
    // of order j inside the arena with no prev, its next (if any) one whose prev is the
    // head, and no block starts where the split puts the upper halves.
    clear_on_exit guard_plan{ws_};
    ws_.clear();
    const auto block = *head(j);
    check_unlink(block, j);
    for (unsigned m = j; m-- > k;)
        if (const auto inner = block + (std::uint64_t{1} << m); map_tag(inner) != 0)
            damaged(list_name(j) + ": its head " + hex(block) + " is a free block of order " + std::to_string(j) +
                    ", but the block map says " + describe_tag(map_tag(inner)) + " starts inside it at " + hex(inner));

    // REQUEST (Alg 5.12): unlink the first free block of order j...
    const auto next = links(block)->next;
    ws_.write(head(j), next);
    if (next) ws_.write(&links(next)->prev, 0);
    // ...split it down to order k, each upper half becoming the only block of its list (the
    // lists of orders k..j-1 are empty: the search above passed them)...
    for (unsigned m = j; m-- > k;) {
        const auto buddy = block + (std::uint64_t{1} << m);
        ws_.write(&links(buddy)->next, 0);
        ws_.write(&links(buddy)->prev, 0);
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
    clear_on_exit guard_plan{ws_};
    ws_.clear();
    plan_release(off, slot);
    log_.commit(op_kind::release, ws_);  // LP/PP
}

// Plans the RELEASE of `off` on top of what ws_ holds, validating each block it reads (the
// released block's order, each buddy it unlinks, the head it pushes on) before using it.
void buddy_heap::plan_release(std::uint64_t off, std::uint64_t slot) {
    const auto arena = geometry_.arena_offset;
    auto cur = off;
    unsigned m = live_order(off, "releasing the block of confirm slot", slot);
    plan_tag(off, 0);
    // Merge with free buddies upward.
    while (m < geometry_.max_order) {
        const auto rel = (cur - arena) ^ (std::uint64_t{1} << m);
        if (rel + (std::uint64_t{1} << m) > geometry_.arena_size) break;  // no buddy inside the arena
        const auto buddy = arena + rel;
        if (planned_tag(buddy) != (free_tag | m)) break;
        check_unlink(buddy, m);
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
    check_head(m);
    const auto first = ws_.read(head(m));
    ws_.write(&links(cur)->next, first);
    ws_.write(&links(cur)->prev, 0);
    if (first) ws_.write(&links(first)->prev, cur);
    ws_.write(head(m), cur);
    plan_tag(cur, static_cast<std::uint8_t>(free_tag | m));
    ws_.write(table_.slot(slot), 0);
}

std::uint64_t heap_in_pool(const pmem::pool_ref& pool, const buddy_heap& heap, std::string_view who) {
    const auto lo = reinterpret_cast<std::uintptr_t>(pool.base());
    const auto h = reinterpret_cast<std::uintptr_t>(heap.base());
    if (h < lo || h - lo > pool.size() || heap.geometry().region_size > pool.size() - (h - lo))
        throw usage_error(std::string(who) + ": the heap does not lie inside the pool '" + pool.path().string() + "'");
    return h - lo;
}

}  // namespace ferrite::alloc
