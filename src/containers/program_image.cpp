// CpNvm's public API (see ferrite/containers/program_image.hpp).
#include "ferrite/containers/program_image.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "ferrite/checkpoint/checkpointer.hpp"
#include "ferrite/checkpoint/image_store.hpp"
#include "ferrite/checkpoint/volatile_image.hpp"
#include "ferrite/error.hpp"

namespace ferrite {
namespace {

constexpr std::uint64_t meta_bytes = 4096;  // CpNvm's first page of the image
constexpr unsigned root_count = 32;
constexpr std::size_t root_name_bytes = 48;
// Size classes: multiples of 64 bytes up to 4 KiB (classes 1..64: a node of 536 bytes takes
// 576, as from malloc, not 1024), then powers of two up to 16 MiB (classes 65..76; the
// first images had classes up to 1 MiB: the heads of the larger classes were added at the
// end of the meta page, where those images hold zeros, "empty").
constexpr unsigned line_classes = 64, class_count = line_classes + 12 + 1;
constexpr std::uint64_t max_class_bytes = program_image::max_reused_block;

struct size_class {
    unsigned index;      // 0: larger than any class (bump only, never reused)
    std::uint64_t size;  // bytes the block takes
};
size_class class_of(std::size_t bytes) {
    if (bytes <= line_classes * 64) {
        const auto i = static_cast<unsigned>((bytes + 63) / 64);
        return {i, std::uint64_t{i} * 64};
    }
    if (bytes <= max_class_bytes) {
        const auto c = static_cast<unsigned>(std::bit_width(bytes - 1));  // 13..24
        return {line_classes + (c - 12), std::uint64_t{1} << c};
    }
    return {0, (bytes + 63) / 64 * 64};
}

struct root_entry {
    char name[root_name_bytes];  // NUL-padded; all zero: unused
    std::uint64_t offset;        // image offset of the object
    std::uint64_t unused;
};
struct allocator_state {
    std::uint64_t bump;  // image offset of the next fresh byte; 0: meta_bytes (a fresh image)
    std::uint64_t free_heads[class_count];  // per size class: image offsets; 0: empty
};
struct meta_page {
    root_entry roots[root_count];
    allocator_state alloc;
};
static_assert(sizeof(meta_page) <= meta_bytes);

std::uint64_t page_size() { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }
std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

[[noreturn]] void damaged(const std::string& what) {
    throw_damaged(pool_errc::damaged_object, "program image", "", what);
}

void check_root_name(std::string_view name) {
    if (name.empty() || name.size() >= root_name_bytes)
        throw usage_error("program_image: a root name has 1 to " + std::to_string(root_name_bytes - 1) + " bytes");
}
std::string_view name_of(const root_entry& r) noexcept { return {r.name, strnlen(r.name, root_name_bytes)}; }

// The calling thread's registrations: (image state, thread id), a few images at once.
struct registration {
    const void* image = nullptr;
    unsigned tid = 0;
};
thread_local registration tls_registrations[4];

// Where an image goes when the caller names no base: the first free slot of a high range,
// [0x7e9000000000, +64 slots of the image's size rounded to 1 GiB), below the usual mmap
// area (the kernel places libraries, thread stacks and large mallocs from about 0x7fxx...
// downwards, and reuses a range freed in the process, which the image's own range would be
// after a close), and inside the application ranges of AddressSanitizer and
// ThreadSanitizer. The kernel's choice if every slot is taken. The fresh mapping is zeroed,
// like the fresh persistent image.
checkpoint::volatile_image map_at_default_base(std::uint64_t bytes) {
    constexpr std::uintptr_t first = 0x7e9000000000ull;
    const std::uint64_t stride = round_up(bytes, std::uint64_t{1} << 30);
    for (unsigned slot = 0; slot < 64; ++slot) {
        try {
            return checkpoint::volatile_image::map(first + slot * stride, bytes);
        } catch (const pool_error&) {
            // taken: the next slot
        }
    }
    return checkpoint::volatile_image::map(0, bytes);
}

}  // namespace

struct program_image::state {
    state(checkpoint::image_store&& s, checkpoint::volatile_image&& v, const image_options& o, bool was_recovered)
        : store(std::move(s)), image(std::move(v)),
          cp(store.log(), image.data(), checkpoint::checkpoint_options{o.interval, o.before_commit, o.replay, o.own_replayer}),
          in_use(store.shape().geometry.threads), recovered(was_recovered) {}
    meta_page& meta() const noexcept { return *reinterpret_cast<meta_page*>(image.data()); }

    checkpoint::image_store store;
    checkpoint::volatile_image image;
    checkpoint::checkpointer cp;
    std::vector<std::atomic<bool>> in_use;  // thread ids taken
    std::mutex alloc_mutex;                 // the allocator's state is shared image data
    bool recovered;
};

program_image::program_image(std::unique_ptr<state> s) noexcept : s_(std::move(s)) {}
program_image::program_image(program_image&&) noexcept = default;
program_image& program_image::operator=(program_image&&) noexcept = default;
program_image::~program_image() = default;

program_image program_image::create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                                    const image_options& o) {
    if (o.max_threads == 0) throw usage_error("program_image: max_threads must be at least 1");
    const std::uint64_t bytes = round_up(std::max<std::uint64_t>(o.image_bytes, 2 * meta_bytes), page_size());
    auto v = o.base != 0 ? checkpoint::volatile_image::map(o.base, bytes) : map_at_default_base(bytes);
    checkpoint::image_shape shape;
    shape.base = v.base();
    shape.geometry = {o.max_threads, round_up(std::max<std::uint64_t>(o.log_bytes, 4096), 64), bytes};
    auto store = checkpoint::image_store::create(pool, heap, anchor, shape);
    return program_image(std::make_unique<state>(std::move(store), std::move(v), o, false));
}

program_image program_image::open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor,
                                  const image_options& o) {
    auto store = checkpoint::image_store::open(pool, heap, anchor);
    store.log().recover();  // validates every committed record first; a no-op after catalog recovery
    const auto& shape = store.shape();
    if (shape.base == 0 || shape.base % page_size() != 0)
        damaged("the recorded volatile image address " + std::to_string(shape.base) + " is not page-aligned");
    // The mapping is the image's size rounded to pages, and loading copies all of it from
    // the persistent image: a size that is not whole pages would read past that.
    if (shape.geometry.image_bytes % page_size() != 0 || shape.geometry.image_bytes < 2 * meta_bytes)
        damaged("the recorded image size " + std::to_string(shape.geometry.image_bytes) +
                " is not a whole number of pages of at least " + std::to_string(2 * meta_bytes) + " bytes");
    auto v = checkpoint::volatile_image::map(shape.base, shape.geometry.image_bytes);
    if (o.lazy)
        v.arm_lazy(store.log().image());
    else
        v.load_eager(store.log().image(), o.load_threads);
    return program_image(std::make_unique<state>(std::move(store), std::move(v), o, true));
}

bool program_image::in_recovery() const noexcept { return s_->recovered; }
std::byte* program_image::data() const noexcept { return s_->image.data() + meta_bytes; }
std::size_t program_image::size() const noexcept { return s_->image.size() - meta_bytes; }
std::span<const std::byte> program_image::whole_image() const noexcept { return {s_->image.data(), s_->image.size()}; }
std::uint64_t program_image::committed_epoch() const noexcept { return s_->cp.epoch(); }
std::uint64_t program_image::pages_loaded() const noexcept { return s_->image.pages_loaded(); }

program_image::thread_scope program_image::register_thread() {
    for (const auto& r : tls_registrations)
        if (r.image == s_.get()) throw usage_error("program_image: this thread is already registered");
    auto free_slot = std::find_if(std::begin(tls_registrations), std::end(tls_registrations),
                                  [](const registration& r) { return r.image == nullptr; });
    if (free_slot == std::end(tls_registrations))
        throw usage_error("program_image: a thread can be registered with at most 4 images at once");
    for (unsigned t = 0; t < s_->in_use.size(); ++t) {
        bool expected = false;
        if (!s_->in_use[t].compare_exchange_strong(expected, true)) continue;
        s_->cp.join(t);
        *free_slot = {s_.get(), t};
        return thread_scope(this, t);
    }
    throw usage_error("program_image: all " + std::to_string(s_->in_use.size()) +
                      " thread logs are taken (image_options::max_threads at create)");
}

program_image::thread_scope::thread_scope(thread_scope&& o) noexcept : img_(o.img_), tid_(o.tid_) { o.img_ = nullptr; }

program_image::thread_scope::~thread_scope() {
    if (img_ == nullptr) return;
    auto& s = *img_->s_;
    s.cp.leave(tid_);  // takes part in a due checkpoint first; its marks go into one more epoch
    for (auto& r : tls_registrations)
        if (r.image == &s) r = {};
    s.in_use[tid_].store(false);
}

program_image::quiescent_scope program_image::quiesce() {
    const unsigned t = current_tid("quiesce");
    s_->cp.leave(t);  // takes part in a due checkpoint first
    return quiescent_scope(this, t);
}

program_image::quiescent_scope::quiescent_scope(quiescent_scope&& o) noexcept : img_(o.img_), tid_(o.tid_) {
    o.img_ = nullptr;
}

program_image::quiescent_scope::~quiescent_scope() {
    if (img_ != nullptr) img_->s_->cp.join(tid_);  // waits while a checkpoint is under way
}

namespace {
[[noreturn, gnu::cold, gnu::noinline]] void throw_not_registered(const char* what) {
    throw usage_error(std::string("program_image::") + what + ": the calling thread is not registered (register_thread())");
}
// The calling thread's id in image `s`. On every mark() and checkpoint(): a few loads and
// compares, inlined into them (the error's string is built out of line, so the common path
// needs no call and no stack frame).
[[gnu::always_inline]] inline unsigned tid_in(const void* s, const char* what) {
    for (const auto& r : tls_registrations)
        if (r.image == s) return r.tid;
    throw_not_registered(what);
}
}  // namespace

unsigned program_image::current_tid(const char* what) const { return tid_in(s_.get(), what); }

bool program_image::replay_pending() { return s_->cp.replay_pending(); }
void program_image::mark(const void* p, std::size_t n) { s_->cp.mark(tid_in(s_.get(), "mark"), p, n); }
bool program_image::checkpoint() { return s_->cp.checkpoint(tid_in(s_.get(), "checkpoint")); }

std::chrono::nanoseconds program_image::until_checkpoint_due() const noexcept { return s_->cp.until_due(); }

void program_image::sync() {
    const unsigned t = current_tid("sync");
    s_->cp.request();
    if (!s_->cp.checkpoint(t))
        throw usage_error("program_image::sync: the epoch was refused: another thread marked more than its log holds");
}

void* program_image::root(std::string_view name) const {
    check_root_name(name);
    for (const auto& r : s_->meta().roots) {
        if (name_of(r) != name) continue;
        if (r.offset < meta_bytes || r.offset >= s_->image.size())
            damaged("root '" + std::string(name) + "' names image offset " + std::to_string(r.offset) +
                    ", outside the image's " + std::to_string(s_->image.size()) + " bytes");
        return s_->image.data() + r.offset;
    }
    return nullptr;
}

void program_image::set_root(std::string_view name, const void* p) {
    check_root_name(name);
    const auto* b = static_cast<const std::byte*>(p);
    if (p != nullptr && (b < data() || b >= data() + size()))
        throw usage_error("program_image::set_root: '" + std::string(name) + "' must point into the image");
    const unsigned t = current_tid("set_root");
    std::lock_guard g(s_->alloc_mutex);
    root_entry* slot = nullptr;
    for (auto& r : s_->meta().roots) {
        const std::string_view have = name_of(r);
        if (have == name) {
            slot = &r;
            break;
        }
        if (slot == nullptr && have.empty()) slot = &r;
    }
    if (slot == nullptr) throw usage_error("program_image: all " + std::to_string(root_count) + " roots are in use");
    s_->cp.mark(t, slot, sizeof *slot);
    if (p == nullptr) {
        std::memset(static_cast<void*>(slot), 0, sizeof *slot);
        return;
    }
    std::memset(slot->name, 0, root_name_bytes);
    std::memcpy(slot->name, name.data(), name.size());
    slot->offset = static_cast<std::uint64_t>(b - s_->image.data());
}

std::size_t program_image::block_bytes(std::size_t bytes) noexcept { return class_of(bytes == 0 ? 1 : bytes).size; }

void* program_image::allocate(std::size_t bytes, bool mark_block) {
    if (void* p = try_allocate(bytes, mark_block)) return p;
    const auto& a = s_->meta().alloc;
    const std::uint64_t at = round_up(a.bump == 0 ? meta_bytes : a.bump, 64);
    throw out_of_memory("program_image: " + std::to_string(bytes) + " bytes do not fit in the image (" +
                        std::to_string(s_->image.size() - std::min<std::uint64_t>(at, s_->image.size())) +
                        " fresh bytes left); create it larger");
}

void* program_image::try_allocate(std::size_t bytes, bool mark_block) {
    if (bytes == 0) bytes = 1;
    const unsigned t = current_tid("allocate");
    const auto [cls, size] = class_of(bytes);
    auto& a = s_->meta().alloc;
    std::byte* const base = s_->image.data();
    std::byte* p = nullptr;
    {
        std::lock_guard g(s_->alloc_mutex);
        if (cls != 0 && a.free_heads[cls] != 0) {
            const std::uint64_t head = a.free_heads[cls];
            if (head < meta_bytes || head % 64 != 0 || head > s_->image.size() || size > s_->image.size() - head)
                damaged("the allocator's free list of " + std::to_string(size) + "-byte blocks names offset " +
                        std::to_string(head));
            std::uint64_t next;
            std::memcpy(&next, base + head, 8);
            s_->cp.mark(t, &a.free_heads[cls], 8);
            a.free_heads[cls] = next;
            p = base + head;
        } else {
            if (a.bump != 0 && (a.bump < meta_bytes || a.bump > s_->image.size()))
                damaged("the allocator's bump pointer names offset " + std::to_string(a.bump) + ", outside the image's " +
                        std::to_string(s_->image.size()) + " bytes");
            const std::uint64_t bump = a.bump == 0 ? meta_bytes : a.bump;
            const std::uint64_t at = round_up(bump, 64);
            if (at < meta_bytes || at > s_->image.size() || size > s_->image.size() - at) return nullptr;
            s_->cp.mark(t, &a.bump, 8);
            a.bump = at + size;
            p = base + at;
        }
    }
    if (mark_block) s_->cp.mark(t, p, size);
    return p;
}

std::uint64_t program_image::allocated_top() const {
    std::lock_guard g(s_->alloc_mutex);
    const std::uint64_t bump = s_->meta().alloc.bump;
    if (bump != 0 && (bump < meta_bytes || bump > s_->image.size()))
        damaged("the allocator's bump pointer names offset " + std::to_string(bump) + ", outside the image's " +
                std::to_string(s_->image.size()) + " bytes");
    return bump == 0 ? meta_bytes : bump;
}

std::vector<program_image::free_block> program_image::free_blocks() const {
    const std::uint64_t top = allocated_top();
    std::lock_guard g(s_->alloc_mutex);
    const auto& a = s_->meta().alloc;
    const std::byte* const base = s_->image.data();
    std::vector<free_block> out;
    std::uint64_t links_left = (top - meta_bytes) / 64;  // more blocks than granules: a loop
    for (unsigned cls = 1; cls < class_count; ++cls) {
        const std::uint64_t size = cls <= line_classes ? std::uint64_t{cls} * 64 : std::uint64_t{1} << (cls - line_classes + 12);
        for (std::uint64_t at = a.free_heads[cls]; at != 0;) {
            if (at < meta_bytes || at % 64 != 0 || at > top || size > top - at)
                damaged("the allocator's free list of " + std::to_string(size) + "-byte blocks names offset " +
                        std::to_string(at) + ", not a block inside the " + std::to_string(top) +
                        " bytes allocated so far");
            if (links_left == 0)
                damaged("the allocator's free list of " + std::to_string(size) + "-byte blocks loops (offset " +
                        std::to_string(at) + ")");
            --links_left;
            out.push_back({at, size});
            std::memcpy(&at, base + at, 8);
        }
    }
    return out;
}

void program_image::deallocate(void* p, std::size_t bytes) {
    if (p == nullptr) return;
    if (bytes == 0) bytes = 1;
    const unsigned t = current_tid("deallocate");
    auto* b = static_cast<std::byte*>(p);
    if (b < data() || b >= data() + size()) throw usage_error("program_image::deallocate: the block is not in the image");
    const unsigned cls = class_of(bytes).index;
    if (cls == 0) return;  // large blocks are not reused (docs: the allocator)
    auto& a = s_->meta().alloc;
    std::lock_guard g(s_->alloc_mutex);
    s_->cp.mark(t, p, 8);
    std::memcpy(p, &a.free_heads[cls], 8);
    s_->cp.mark(t, &a.free_heads[cls], 8);
    a.free_heads[cls] = static_cast<std::uint64_t>(b - s_->image.data());
}

}  // namespace ferrite
