// ferrite/index/incll.hpp: InCLL, in-cache-line logging with user-space epochs: what makes
// the index's tree (tree.hpp) durable. The tree calls the hooks below before each store to a
// node; durable_tree.hpp puts the two together over a pool region (incll_layout.hpp).
//
// Algorithm: [NVM] ch. 3 (docs/references.md; thesis L793-1174), in user space.
// Time is cut into epochs (default 64 ms). After a crash the tree is rolled back to its state
// at the end of the last durable epoch D: buffered durability. Within an epoch E:
//   * a leaf's permutation change (insert, erase): if node_epoch != E, first
//     permutation_incll := permutation, node_epoch := E, then the new permutation. The three
//     words share line 0 (nodes.hpp), stored in that order: the media holds a prefix of a
//     line's stores, so a new permutation on the media implies its undo copy. No pwb, no fence.
//   * an insert writes its key and value into a slot that was free at the start of E (the
//     permutation rollback frees it again). If the slot was live at the start of E (insert
//     after remove in one epoch) the leaf goes to the external log first.
//   * an update of a value that was live at the start of E: the value line's undo word
//     (incll_words.hpp) := (slot, old value, E), then the value, in one line. A second slot of
//     the same line in the same epoch, or an old value wider than 44 bits: external log.
//   * everything else (a split rewrites its leaf; interior nodes; the parent's insert) first
//     copies the whole node into the thread's external undo log (once per node per epoch:
//     logged_epoch), write-back of the entry, one pfence, then the change.
//   * the first writer of a node in E puts it on its shard's dirty list (dirty_epoch), and
//     every writer notes which of its five lines it wrote: the boundary writes back only
//     those (an update dirties one value line, not the leaf). New nodes go on it whole when
//     made; they are unreachable after a rollback and their arena space is reclaimed by the
//     rollback of the allocation counter.
// Epoch boundary (sync(), or the ticker every epoch_length): every writer shard is locked
// (writers hold their shard's lock for the whole operation, so none is between two stores),
// the dirty nodes' written lines are written back (pwb) and fenced (pfence), then the commit
// line (incll_layout.hpp) records the root, the arena counter and
// durable_epoch := E, written back and fenced: two fences per epoch, none per operation.
// With the no-write-back backend the pwbs cost nothing and the boundary is the two fences.
// The write-back is shared: writers waiting on their shard locks claim chunks of the dirty
// lists too (512+ nodes each, so one busy shard is shared as well), each writing back and
// fencing what it claimed (one pfence per helper) before counting it done;
// the commit waits for every shard to be counted, so each line's pwb and its thread's pfence
// precede the commit line's store (the thesis's wbinvd runs on one core).
// If the low 16 bits of the next epoch wrap, every leaf's value undo words are cleared
// (written back, fenced) before it starts, so no stale word can alias a later epoch; lazy
// recovery is finished first (incll_lazy.hpp), so no pending word is cleared unapplied.
// An epoch in which nothing was written ends without any persistence instruction.
// incll_options::external_only turns the in-line words off: every node's first change in an
// epoch logs it whole (the thesis's external-logging-only variant, the tree-undo baseline);
// same boundary, same recovery (the external log entries are all there is to roll back).
//
// Recovery (durable_tree.cpp, incll_recovery.cpp, incll_lazy.hpp): roll back every external
// log entry of epoch D+1 (whole, by its checksum), then each leaf: node_epoch == D+1 restores
// the permutation from permutation_incll; an undo word of epoch D+1 restores its value; every
// undo word is cleared; locks and volatile bookkeeping are reset. Then durable_epoch := D+1
// (its state is D's), so the next run's epoch D+2 can never match a stale entry or word.
// The leaves' part is lazy by default: each node at its first access, with D+1 recorded in
// the commit line as pending until every node is (incll_lazy.hpp has the argument).
//
// What differs from the thesis, and why:
//   * one engine for two key widths: basic_incll<K> (K = std::uint64_t, `incll`, or key128,
//     key.hpp). Keys need no undo of their own (a key is written only into a slot free at
//     the start of the epoch, or into a node logged whole), so only the node's geometry
//     differs: five or seven lines (nodes.hpp: lines, key_line, first_value_line) and a log
//     entry of one header line plus the node; the protocol and the argument are the same.
//   * no wbinvd and no kernel module: the dirty lists name the lines to write back, so the
//     boundary costs pwbs for the nodes written in the epoch, not a whole-cache flush.
//   * the epoch boundary quiesces writers through per-shard locks (a thread takes its
//     shard's lock, uncontended, for each write) instead of the thesis's global barrier; no
//     thread limit, no fixed addresses (links are self-relative, rel_ptr.hpp).
//   * Fig. 3.5 line 14 records the old epoch in nodeEpoch; here the current one (E) is
//     recorded, which is what recovery compares against (notes: the pseudocode defect).
//   * values are 8 bytes: an old value that does not fit the undo word's 44 bits is
//     logged externally.
//   * lazy recovery keeps a volatile state byte per node and records the pending epoch in
//     the commit line (incll_lazy.hpp), so a crash before every node was reached is safe.
//   * allocation is a bump arena whose counter each commit records; nodes are never freed
//     (tree.hpp), so the arena needs no free list. Nodes reserved by a shard and not used
//     when the process stops stay allocated (at most a few per shard and restart).
//
// Crash consistency, in one line per case: a store the media holds from a failed epoch is
// either in a slot that was free at the start of that epoch (undone by the permutation's
// rollback), or behind an in-line undo word in its own line (same-line order), or in a node
// whose external log entry was fenced before the store; the commit line names a root and an
// arena counter only with the durable_epoch whose dirty nodes were fenced before it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ferrite/index/incll_layout.hpp"
#include "ferrite/index/incll_lazy.hpp"
#include "ferrite/index/nodes.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::index {

struct incll_options {
    // How often the ticker ends an epoch; 0: no ticker, epochs end only at sync().
    std::chrono::milliseconds epoch_length{64};
    unsigned shards = 16;       // writer shards (a thread uses shard (its number % shards))
    unsigned log_entries = 64;  // external log entries per shard (>= 24)
    // Open: recover each node at its first access (incll_lazy.hpp) rather than every node
    // before open returns.
    bool lazy_recovery = true;
    // The thesis's external-logging-only variant ([NVM] ch. 3's comparison; bench subject
    // tree-undo): no in-line undo words, every node's first change in an epoch copies it whole
    // into the external log (write-back, pfence) first. The same epochs, boundary and recovery
    // (a rollback of the log entries is all recovery has to do; the leaves' in-line words are
    // never written, so they never match the failed epoch).
    bool external_only = false;
    // Dirty nodes per chunk of the epoch end's shared write-back (at least; 0 counts as 1).
    unsigned write_back_chunk = 512;
    // Called at each epoch boundary with every writer quiesced, before the write-backs, with
    // the epoch that is ending (tests and the crash target snapshot the tree here).
    std::function<void(std::uint64_t)> before_commit;
};

struct incll_stats {
    std::uint64_t commits = 0, nodes_written_back = 0, external_entries = 0;
    std::uint64_t shards_helped = 0;  // dirty-list chunks written back by a waiting writer
};

// K: the tree's key type (key.hpp); the engine is the same for both widths, only the node
// layout (nodes.hpp: lines, key_line, first_value_line) and the log entry's size differ.
// Explicitly instantiated for both in incll.cpp.
template <class K>
class basic_incll {
public:
    using leaf = basic_leaf<K>;
    using interior = basic_interior<K>;
    using log_entry = incll_layout::basic_log_entry<K>;
    static constexpr std::uint64_t node_bytes = node_bytes_of<K>;

    // Over a region that holds a formatted, recovered tree (durable_tree.cpp).
    basic_incll(std::byte* region, const incll_options& options);
    ~basic_incll();
    basic_incll(const basic_incll&) = delete;
    basic_incll& operator=(const basic_incll&) = delete;

    // The tree's root and height (the commit records the root; the height sizes reservations).
    void attach(std::atomic<node_base*>* root, std::atomic<unsigned>* height);

    // Lazy recovery (incll_lazy.hpp), from open(); null after an eager one.
    void adopt(std::unique_ptr<basic_lazy_recovery<K>> lazy) noexcept { lazy_ = std::move(lazy); }
    // The tree calls these before it uses a node it read from a recovered node: n is
    // recovered when they return (parent: the node n was read from). recovered() throws
    // damaged_pool; recovered_nothrow() (splits) marks a damaged node for the next access.
    void recovered(node_base* n, interior* parent) const {
        if (lazy_) lazy_->ensure(n, parent);
    }
    void recovered_nothrow(node_base* n, interior* parent) const noexcept {
        if (lazy_) lazy_->ensure_nothrow(n, parent);
    }
    bool is_recovered(const node_base* n) const noexcept { return !lazy_ || lazy_->is_recovered(n); }
    void recover_all() const;     // every reachable node recovered (no write-back; describe())
    void finish_recovery();       // lazy_recovery::finish: only with no operation or epoch end running
    std::uint64_t lazily_recovered() const noexcept { return lazy_ ? lazy_->recovered_count() : 0; }
    void start_ticker();
    void stop_ticker() noexcept;

    // Ends the current epoch if anything was written in it and waits until it is durable;
    // returns the epoch whose end state is now durable (state_epoch()): a crash from now on
    // recovers that state or a later epoch's.
    FERRITE_FLOW_ROOT std::uint64_t sync();
    std::uint64_t current_epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
    std::uint64_t durable_epoch() const noexcept;
    std::uint64_t state_epoch() const noexcept;  // the epoch whose end the durable state is

    // A writer operation: holds the calling thread's shard (and keeps the epoch from ending).
    class op_scope {
    public:
        explicit op_scope(basic_incll* e);
        ~op_scope();
        op_scope(const op_scope&) = delete;
        op_scope& operator=(const op_scope&) = delete;

    private:
        basic_incll* e_;
    };

    // Hooks, called inside an op_scope with the node locked, before the store they name.
    void before_perm_store(leaf* l);
    void before_slot_write(leaf* l, unsigned slot);
    void before_value_store(leaf* l, unsigned slot);
    void before_rewrite(node_base* n);
    // Allocation, inside an op_scope: reserve() before anything is changed (throws
    // out_of_memory if the arena is full), then make_*() takes reserved nodes.
    void reserve(unsigned nodes);
    leaf* make_leaf(std::uint64_t version, K low) noexcept;
    interior* make_interior(std::uint64_t version) noexcept;

    std::uint64_t offset_of(const void* p) const noexcept {
        return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - region_);
    }
    std::uint64_t allocated() const noexcept { return bump_.load(std::memory_order_relaxed); }

    using stats = incll_stats;
    stats statistics() const noexcept;

private:
    struct alignas(64) shard {
        FERRITE_FLOW_SKIP std::atomic<std::uint32_t> lock{0};
        FERRITE_FLOW_SKIP unsigned log_used = 0;
        log_entry* log = nullptr;
        FERRITE_FLOW_SKIP std::vector<node_base*> dirty;
        FERRITE_FLOW_SKIP std::vector<void*> stock;  // reserved arena nodes
    };
    shard& mine() noexcept;
    void lock_shard(shard& s) noexcept;
    static void unlock_shard(shard& s) noexcept { s.lock.store(0, std::memory_order_release); }
    // The boundary's write-back, shared by the thread that ends the epoch and the writers
    // waiting on their shard locks: claims chunks of the dirty lists of the open write-back
    // (claim_) one at a time, writes back their lines, fences its own write-backs, counts them.
    FERRITE_FLOW_ROOT void write_back_claimed(bool helper) noexcept;
    void lock_helping(std::atomic<std::uint32_t>& lock) noexcept;
    // Puts n on the dirty list of the current epoch (first time) and notes the lines written.
    void touch(node_base* n, unsigned lines) noexcept;
    FERRITE_FLOW_ROOT void log_node(node_base* n) noexcept;
    void* take_node() noexcept;
    void scrub_value_words();
    void ticker_loop();
    incll_layout::commit_line& commit() const noexcept {
        return *reinterpret_cast<incll_layout::commit_line*>(region_ + 64);
    }

    std::byte* const region_;
    incll_options options_;
    const incll_layout::geometry geometry_;
    std::unique_ptr<shard[]> shards_;
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> epoch_;
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> bump_;
    std::atomic<node_base*>* root_ = nullptr;
    std::atomic<unsigned>* height_ = nullptr;
    std::unique_ptr<basic_lazy_recovery<K>> lazy_;
    // One epoch end at a time. A spin lock that waits through pmem::wait_hint, not a mutex: the
    // crash simulator runs one thread at a time and passes its token only at wait hints and
    // persistence events, so a thread blocked in a mutex would hold the token forever.
    FERRITE_FLOW_SKIP std::atomic<std::uint32_t> advance_{0};
    // The open write-back: (epoch << chunk_bits) | next chunk to claim; 0 when none is open. chunks_:
    // its chunks, chunk_start_[k]: shard k's first chunk (chunk_nodes_ dirty nodes each),
    // written by the ender before it opens claim_; done_: chunks written back and fenced.
    static constexpr unsigned chunk_bits = 20;
    static constexpr std::uint64_t chunk_mask = (std::uint64_t{1} << chunk_bits) - 1;
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> claim_{0};
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> chunks_{0};
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> done_{0};
    FERRITE_FLOW_SKIP std::uint64_t chunk_nodes_ = 1;
    FERRITE_FLOW_SKIP std::vector<std::uint64_t> chunk_start_;
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> commits_{0}; FERRITE_FLOW_SKIP std::atomic<std::uint64_t> written_back_{0};
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> external_{0};
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> helped_{0};
    std::mutex ticker_mutex_;
    std::condition_variable ticker_cv_;
    bool ticker_stop_ = false;
    std::thread ticker_;
};

extern template class basic_incll<std::uint64_t>;
extern template class basic_incll<key128>;
using incll = basic_incll<std::uint64_t>;

}  // namespace ferrite::index
