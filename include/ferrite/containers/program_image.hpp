// ferrite/containers/program_image.hpp: CpNvm's public API: a lock-based program made durable
// by marking what it changes and checkpointing at consistent points ([NVM] ch. 4).
//
//   ferrite::catalog names(pool, heap);
//   auto img = names.open<ferrite::program_image>("app", ferrite::image_options{.image_bytes = 256 << 20});
//   auto me = img->register_thread();                     // one per thread (RAII)
//   auto* counts = static_cast<std::uint64_t*>(img->root("counts"));
//   if (!counts) { counts = static_cast<std::uint64_t*>(img->allocate(64 * 8)); img->set_root("counts", counts); }
//   img->mark(&counts[3], 8);  ++counts[3];               // mark before the first write in an epoch
//   img->checkpoint();                                    // at a consistent point, holding no lock
//   img->sync();                                          // before acknowledging: durable on return
//
// The program runs on the volatile image (data(), size(): the same virtual addresses after
// every restart, so pointers into it stay valid); the persistent image and the per-thread
// redo logs live in one heap block of the pool (checkpoint/image_store.hpp), named in the
// catalog as kind 10 "program_image". After a crash, open() replays the committed epochs
// that were not applied yet (checkpoint/epoch_log.hpp), maps the volatile image at its
// recorded address and loads it, eagerly or on first touch (image_options::lazy,
// checkpoint/volatile_image.hpp). in_recovery() is then true. Buffered durability: a crash
// loses at most the epochs after the last committed one, never tears one; sync() returns
// after its epoch committed.
//
// The first page of the image is CpNvm's own, checkpointed like the rest: a table of 32
// named roots (name up to 47 bytes, image offset) and the allocator's state (a bump pointer
// and one free list per size class: multiples of 64 bytes up to 4 KiB, then powers of two up
// to 16 MiB; larger blocks come from the bump pointer and are never reused; every block is
// 64-byte aligned). allocate() marks its own writes and, by default, the block it returns
// ([NVM] 4.3.1).
//
// Threads: register_thread() takes one of the image's `max_threads` logs for the calling
// thread until the scope ends; mark, checkpoint and sync need a registered thread.
// Contract of checkpoint() and sync(): call them holding no lock that protects image data.
//
// What differs from [NVM]: docs/checkpointing.md (the commit record, refused epochs, the
// catalog kind, the page install by mremap); replay runs in the last thread of a
// checkpoint, not in background threads, for now.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/checkpoint/replay_mode.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite {

struct image_options {
    // At create (an existing image keeps its own):
    std::uint64_t image_bytes = std::uint64_t{64} << 20;  // rounded up to the page size
    unsigned max_threads = 16;                            // threads registered at once
    std::uint64_t log_bytes = std::uint64_t{1} << 20;     // per thread: an epoch's marked bytes * 1.5 fit
    std::uintptr_t base = 0;  // the volatile image's address; 0: a free slot of a high range (program_image.cpp)
    // At every open:
    std::chrono::milliseconds interval{64};  // checkpoint() commits at most this often
    bool lazy = false;                       // load pages on first touch instead of all at open
    unsigned load_threads = 0;               // eager load (0: hardware concurrency)
    // For tests and tools (the crash target's history of images): called with the epoch by
    // the last thread of each checkpoint before it commits, while no thread writes the image.
    std::function<void(std::uint64_t)> before_commit;
    // Who applies a committed epoch to the persistent image (checkpoint/checkpointer.hpp):
    // the last thread of the checkpoint (in_line), or a replayer thread (background: the
    // image's own, or, own_replayer false, the caller's, calling replay_pending()).
    checkpoint::replay_mode replay = checkpoint::replay_mode::in_line;
    bool own_replayer = true;
};

class program_image {
public:
    using value_type = std::uint8_t;  // the catalog's element type check ("u8")

    static program_image create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                                const image_options& o = {});
    static program_image open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor,
                              const image_options& o = {});
    program_image(program_image&&) noexcept;
    program_image& operator=(program_image&&) noexcept;
    ~program_image();

    bool in_recovery() const noexcept;
    std::byte* data() const noexcept;
    std::size_t size() const noexcept;  // usable bytes (the whole image less CpNvm's first page)
    // The whole volatile image, CpNvm's first page included: what a checkpoint copies (tests).
    std::span<const std::byte> whole_image() const noexcept;

    class thread_scope {
    public:
        thread_scope(thread_scope&&) noexcept;
        thread_scope& operator=(thread_scope&&) = delete;
        ~thread_scope();
        unsigned id() const noexcept { return tid_; }

    private:
        friend class program_image;
        thread_scope(program_image* img, unsigned tid) noexcept : img_(img), tid_(tid) {}
        program_image* img_;
        unsigned tid_;
    };
    // Registers the calling thread (usage_error when max_threads are registered, or this
    // thread is already).
    thread_scope register_thread();

    // A registered thread about to wait for something other than the image's threads (a
    // lock of the program's own, input, another thread's phase) takes part in a checkpoint
    // that is due, then stops counting in checkpoints until the scope ends: the others'
    // checkpoints no longer wait for it. It must not write the image (nor mark, nor
    // checkpoint) meanwhile. (docs/checkpointing.md, section 5.)
    class quiescent_scope {
    public:
        quiescent_scope(quiescent_scope&&) noexcept;
        quiescent_scope& operator=(quiescent_scope&&) = delete;
        ~quiescent_scope();

    private:
        friend class program_image;
        quiescent_scope(program_image* img, unsigned tid) noexcept : img_(img), tid_(tid) {}
        program_image* img_;
        unsigned tid_;
    };
    quiescent_scope quiesce();

    void mark(const void* p, std::size_t n);
    bool checkpoint();  // true when an epoch committed in this call
    void sync();        // commits an epoch now; returns after it is durable
    // Background replay with own_replayer false: the replayer's step (checkpointer.hpp).
    bool replay_pending();
    // Time until the interval makes a checkpoint due (<= 0: due now). A thread about to wait
    // for input with marked lines may wait this long, still counted, and then take part in
    // the checkpoint instead of forcing one as quiesce() does (ferrite-kv's cpnvm engine).
    std::chrono::nanoseconds until_checkpoint_due() const noexcept;

    void* root(std::string_view name) const;             // nullptr if not set
    void set_root(std::string_view name, const void* p);  // p in the image, or nullptr to clear
    void* allocate(std::size_t bytes, bool mark_block = true);
    // allocate() that answers nullptr instead of throwing out_of_memory when the image has no
    // free block of the size class and no fresh bytes (a cache evicts and tries again).
    void* try_allocate(std::size_t bytes, bool mark_block = true);
    // The bytes a block for `bytes` takes (its size class). Blocks of up to max_reused_block
    // go back to their class's free list when deallocated; larger ones are never reused.
    static std::size_t block_bytes(std::size_t bytes) noexcept;
    static constexpr std::size_t max_reused_block = std::size_t{16} << 20;
    void deallocate(void* p, std::size_t bytes);

    // The allocator's state, for a program's open to check against its own objects before it
    // writes (reads only). Offsets count from the start of whole_image().
    struct free_block {
        std::uint64_t offset;
        std::uint64_t bytes;  // its size class
    };
    // First byte the bump pointer has not handed out (the end of CpNvm's page when nothing was
    // ever allocated); damaged_pool when it lies outside the image.
    std::uint64_t allocated_top() const;
    // Every block of every free list, each list walked with every link checked before it is
    // followed: 64-byte aligned, inside what the bump pointer handed out, no loop
    // (damaged_pool otherwise, naming the size class and the offset). Overlaps between blocks
    // are the caller's to check (it knows its live objects too).
    std::vector<free_block> free_blocks() const;

    std::uint64_t committed_epoch() const noexcept;
    std::uint64_t pages_loaded() const noexcept;  // lazy loading: pages brought in so far

private:
    struct state;
    explicit program_image(std::unique_ptr<state> s) noexcept;
    unsigned current_tid(const char* what) const;
    std::unique_ptr<state> s_;
};

namespace containers {

extern const kind_ops program_image_kind;  // src/containers/program_image_kind.cpp (kind 10)

template <>
struct named_kind<ferrite::program_image> {
    static constexpr std::uint32_t id = 10;
    using element_type = std::uint8_t;
    static program_image make(const named_context& c, std::uint64_t& anchor, const image_options& o = {}) {
        return anchor == 0 ? program_image::create(c.pool, c.heap, anchor, o) : program_image::open(c.pool, c.heap, anchor, o);
    }
};

}  // namespace containers
}  // namespace ferrite
