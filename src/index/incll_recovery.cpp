// src/index/incll_recovery.cpp: InCLL's recovery at open (incll.hpp, [NVM] ch. 3
// L1104-1174): validate the region's geometry and commit line; roll back the external log
// entries of the failed epoch F = D+1; then either
//   * lazily (incll_lazy.hpp): recover the root and the leftmost path only (the height), and
//     record pending := F, durable_epoch := F in the commit line; every other node is rolled
//     back at its first access; or
//   * eagerly (asked for, or forced: a pending epoch from an earlier run, or a first epoch
//     that wraps the undo words' 16 epoch bits): walk every reachable node, validating it,
//     rolling each leaf back through its in-line undo words for F and any pending epoch, and
//     resetting what is volatile (locks, parents, bookkeeping); make the rollback durable;
//     then pending := 0, durable_epoch := F (its state is D's).
// Either way no later run's epoch can match a stale entry or undo word.
//
// Never trusting the media: every offset is checked to name a node of the arena below the
// committed allocation counter before it is followed, every count and permutation before it
// is used (incll_lazy.hpp's per-node checks, in both modes); eagerly also each node is
// visited once (a cycle or a shared child is damage), the depth is bounded and every leaf
// must be at the same depth, the leaf chain must be exactly the leaves in key order. Anything
// else throws damaged_pool (region "incll tree"). Validation of
// the geometry, the commit line and the log entries happens before anything is written; a
// damaged node found during the walk is reported after the log's rollback was applied (the
// rollback is what the next open would do again).
//
// Restartable: the log entries are not changed, so a second run restores the same images;
// each leaf's rollback stores the permutation before resetting node_epoch and the value
// before clearing its undo word (one line each: the media never holds the reset without the
// restored word); the commit line is written only after the rollback is fenced. (The bump
// matters only to a crash in the run after recovery; the incll-tree crash target runs such a
// second life inside its observed recovery, so the bump's write-back and fence are
// crash-tested and mutation kills them.)
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/incll_lazy.hpp"
#include "ferrite/index/incll_words.hpp"
#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::index {
namespace {

namespace layout = incll_layout;
namespace words = incll_words;

[[noreturn]] void damaged(const std::string& what) { throw_damaged(pool_errc::damaged_object, "incll tree", "", what); }

std::string num(std::uint64_t v) { return std::to_string(v); }

template <class K>
class recovery {
public:
    using leaf = basic_leaf<K>;
    using interior = basic_interior<K>;
    using log_entry = layout::basic_log_entry<K>;
    using node_recovery = basic_node_recovery<K>;
    static constexpr std::uint64_t node_bytes = node_bytes_of<K>;

    recovery(std::byte* region, std::uint64_t bytes) : region_(region), bytes_(bytes) {}

    // Read-only: the geometry, the commit line, the log entries of the failed epoch and the
    // root's offset (what open() checks before it writes anything).
    incll_summary check() {
        check_geometry();
        check_commit();
        (void)entries_to_roll_back();
        (void)node_at(root_offset_, "the root");
        return incll_summary{d_, allocated_, g_.arena_nodes};
    }

    FERRITE_FLOW_ROOT basic_incll_recovered<K> run(bool lazy) {
        check_geometry();
        check_commit();
        const std::vector<const log_entry*> entries = entries_to_roll_back();
        for (const auto* e : entries) {
            auto* node = region_ + e->node;
            auto* w = reinterpret_cast<std::uint64_t*>(node);
            for (unsigned i = 0; i < node_bytes / 8; ++i)
                std::atomic_ref<std::uint64_t>(w[i]).store(e->image[i], std::memory_order_relaxed);
            pmem::pwb_range(node, node_bytes);
        }
        // No fence here: the per-leaf rollback below writes some of the same lines after the
        // images (same-line order keeps them in order) and a rerun applies both again; one
        // fence after both orders them before the commit line.
        const std::uint64_t f = d_ + 1;
        if (lazy && pending_ == 0 && ((f + 1) & words::epoch_mask) != 0) return run_lazily(f, !entries.empty());

        nodes_.emplace(region_, g_, allocated_, f, pending_);
        visited_.assign(allocated_, false);
        node_base* root = node_at(root_offset_, "the root");
        walk(root, nullptr, 0);
        check_chain();
        if (wrote_ || !entries.empty()) pmem::pfence();  // the rollback is durable before the commit line names F

        auto& c = commit();
        c.slots[f & 1] = c.slots[d_ & 1];
        std::atomic_ref<std::uint64_t>(c.pending).store(0, std::memory_order_relaxed);
        std::atomic_ref<std::uint64_t>(c.durable_epoch).store(f, std::memory_order_release);
        pmem::pwb(&c);
        pmem::pfence();
        return basic_incll_recovered<K>{root, leaf_depth_ + 1, nullptr};
    }

private:
    // The root and the leftmost path (the height) now, every other node at its first access.
    FERRITE_FLOW_ROOT basic_incll_recovered<K> run_lazily(std::uint64_t f, bool logged) {
        auto lazy = std::make_unique<basic_lazy_recovery<K>>(region_, g_, allocated_, f);
        node_base* root = node_at(root_offset_, "the root");
        unsigned height = 1;
        interior* parent = nullptr;
        for (node_base* n = root;; ++height) {
            if (height > 64) damaged("the tree is deeper than 64 levels");
            lazy->ensure(n, parent);
            if (n->is_leaf()) break;
            parent = static_cast<interior*>(n);
            n = node_recovery::child(parent, 0);
        }
        if (logged) pmem::pfence();  // the log rollback is durable before the commit line names F
        auto& c = commit();
        c.slots[f & 1] = c.slots[d_ & 1];
        std::atomic_ref<std::uint64_t>(c.pending).store(f, std::memory_order_relaxed);  // before durable_epoch, in its line
        std::atomic_ref<std::uint64_t>(c.durable_epoch).store(f, std::memory_order_release);
        pmem::pwb(&c);
        pmem::pfence();
        return basic_incll_recovered<K>{root, height, std::move(lazy)};
    }

    layout::commit_line& commit() const noexcept { return *reinterpret_cast<layout::commit_line*>(region_ + 64); }

    void check_geometry() {
        if (bytes_ < layout::header_bytes) damaged("the region (" + num(bytes_) + " bytes) is smaller than its header");
        if (reinterpret_cast<std::uintptr_t>(region_) % 64 != 0) damaged("the region is not 64-byte aligned");
        std::memcpy(&g_, region_, sizeof(g_));
        if (g_.magic != layout::magic) damaged("no durable tree here (bad magic; or its create was interrupted)");
        if (g_.version != layout::version_of<K>) {
            // The other key width's tree: say so (nothing has been written).
            const unsigned made = layout::key_bytes_of_version(g_.version);
            if (made != 0)
                damaged("this tree holds " + num(made) + "-byte keys (layout version " + num(g_.version) + "); opened as a tree of " +
                        num(sizeof(K)) + "-byte keys");
            damaged("layout version " + num(g_.version) + " is not " + num(layout::version_of<K>));
        }
        if (g_.region_bytes != bytes_) damaged("made for " + num(g_.region_bytes) + " bytes, opened with " + num(bytes_));
        if (g_.shards == 0 || g_.shards > 4096) damaged("shard count " + num(g_.shards) + " out of range");
        if (g_.log_entries < 24 || g_.log_entries > (1u << 20)) damaged("log entries " + num(g_.log_entries) + " out of range");
        if (g_.logs_offset != layout::header_bytes) damaged("log offset " + num(g_.logs_offset));
        if (g_.arena_offset != layout::bytes_for<K>(g_.shards, g_.log_entries, 0)) damaged("arena offset " + num(g_.arena_offset));
        if (g_.arena_offset > bytes_ || g_.arena_nodes > (bytes_ - g_.arena_offset) / node_bytes || g_.arena_nodes == 0)
            damaged("arena of " + num(g_.arena_nodes) + " nodes does not fit");
    }

    void check_commit() {
        const auto& c = commit();
        d_ = std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(c.durable_epoch)).load(std::memory_order_acquire);
        if (d_ == 0 || d_ > (std::uint64_t{1} << 62)) damaged("durable epoch " + num(d_) + " out of range");
        const auto& s = c.slots[d_ & 1];
        if (s.allocated == 0 || s.allocated > g_.arena_nodes)
            damaged("allocated nodes " + num(s.allocated) + " out of range (arena " + num(g_.arena_nodes) + ")");
        if (s.state_epoch == 0 || s.state_epoch > d_) damaged("state epoch " + num(s.state_epoch) + " after durable " + num(d_));
        allocated_ = s.allocated;
        root_offset_ = s.root;
        pending_ = c.pending;
        if (pending_ > d_ || (pending_ != 0 && d_ - pending_ > words::epoch_mask))
            damaged("pending epoch " + num(pending_) + " does not fit durable epoch " + num(d_));
    }

    std::vector<const log_entry*> entries_to_roll_back() const {
        std::vector<const log_entry*> out;
        const auto* logs = reinterpret_cast<const log_entry*>(region_ + g_.logs_offset);
        for (std::uint64_t i = 0; i < g_.shards * g_.log_entries; ++i) {
            const auto& e = logs[i];
            if (e.epoch != d_ + 1) continue;
            const std::uint64_t h = pmem::fnv1a64(&e.epoch, 16);
            if (pmem::fnv1a64(e.image, sizeof(e.image), h) != e.checksum) continue;  // torn: its node is unchanged
            if (!is_node_offset(e.node)) damaged("log entry " + num(i) + " names offset " + num(e.node) + ", not a node");
            out.push_back(&e);
        }
        return out;
    }

    bool is_node_offset(std::uint64_t off) const noexcept {
        if (off < g_.arena_offset) return false;
        const std::uint64_t rel = off - g_.arena_offset;
        return rel % node_bytes == 0 && rel / node_bytes < allocated_;
    }
    node_base* node_at(std::uint64_t off, const char* what) const {
        if (!is_node_offset(off)) damaged(std::string(what).append(" is at offset ").append(num(off)).append(", not an allocated node"));
        return reinterpret_cast<node_base*>(region_ + off);
    }
    void walk(node_base* n, interior* parent, unsigned depth) {
        const std::uint64_t index = nodes_->index_of(n);
        if (visited_[index]) damaged("node " + num(index) + " is reachable twice");
        visited_[index] = true;
        if (depth > 64) damaged("the tree is deeper than 64 levels");
        if (nodes_->recover(n, parent)) {  // validated; rolled back: its changed lines written back
            const auto* base = reinterpret_cast<const std::byte*>(n);
            for (const unsigned line : rolled_back_lines_of<K>) {
                // the rollback nodes_->recover() just made (stores its summary does not hand on)
                FERRITE_FLOW_STORED_ELSEWHERE(base + line * pmem::cache_line_size, pmem::cache_line_size);
                pmem::pwb(base + line * pmem::cache_line_size);
            }
            wrote_ = true;
        }
        if (n->is_leaf()) {
            if (leaves_.empty()) leaf_depth_ = depth;
            else if (depth != leaf_depth_) damaged("leaves at depths " + num(leaf_depth_) + " and " + num(depth));
            leaves_.push_back(static_cast<leaf*>(n));
            return;
        }
        auto* in = static_cast<interior*>(n);
        const std::uint64_t k = in->nkeys.load(std::memory_order_relaxed);
        for (std::uint64_t i = 0; i <= k; ++i) walk(node_recovery::child(in, i), in, depth + 1);
    }

    void check_chain() const {
        if (leaves_.front()->low_key != K{}) damaged("the first leaf's low key is not 0");
        for (std::size_t i = 0; i < leaves_.size(); ++i) {
            const std::int64_t d = leaves_[i]->next.raw();
            if (i + 1 == leaves_.size()) {
                if (d != 0) damaged("the last leaf has a next link");
                break;
            }
            if (leaves_[i]->next.load(std::memory_order_relaxed) != leaves_[i + 1] || d == 0)
                damaged("leaf chain link " + num(i) + " does not name the next leaf in key order");
            if (leaves_[i + 1]->low_key <= leaves_[i]->low_key) damaged("leaf low keys out of order at " + num(i));
        }
    }

    std::byte* const region_;
    const std::uint64_t bytes_;
    FERRITE_FLOW_SKIP layout::geometry g_{};
    FERRITE_FLOW_SKIP std::uint64_t d_ = 0, allocated_ = 0, root_offset_ = 0, pending_ = 0;
    FERRITE_FLOW_SKIP std::optional<node_recovery> nodes_;
    FERRITE_FLOW_SKIP std::vector<bool> visited_;
    FERRITE_FLOW_SKIP std::vector<leaf*> leaves_;
    FERRITE_FLOW_SKIP unsigned leaf_depth_ = 0;
    FERRITE_FLOW_SKIP bool wrote_ = false;
};

}  // namespace

template <class K>
basic_incll_recovered<K> incll_recover(std::byte* region, std::uint64_t bytes, bool lazy) {
    return recovery<K>(region, bytes).run(lazy);
}

template <class K>
incll_summary incll_check(const std::byte* region, std::uint64_t bytes) {
    return recovery<K>(const_cast<std::byte*>(region), bytes).check();  // check() writes nothing
}

template basic_incll_recovered<std::uint64_t> incll_recover<std::uint64_t>(std::byte*, std::uint64_t, bool);
template basic_incll_recovered<key128> incll_recover<key128>(std::byte*, std::uint64_t, bool);
template incll_summary incll_check<std::uint64_t>(const std::byte*, std::uint64_t);
template incll_summary incll_check<key128>(const std::byte*, std::uint64_t);

}  // namespace ferrite::index
