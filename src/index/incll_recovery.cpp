// src/index/incll_recovery.cpp: InCLL's recovery (incll.hpp, [NVM] ch. 3 L1104-1174), eager:
// validate the region's geometry and commit line; roll back the external log entries of the
// failed epoch D+1; walk every reachable node, validating it, rolling each leaf back through
// its in-line undo words and resetting what is volatile (locks, parents, bookkeeping); make
// the rollback durable; then durable_epoch := D+1 (its state is D's) so that no later run's
// epoch can match a stale entry or undo word.
//
// Never trusting the media: every offset is checked to name a node of the arena below the
// committed allocation counter before it is followed, every count and permutation before it
// is used, each node is visited once (a cycle or a shared child is damage), the depth is
// bounded and every leaf must be at the same depth, the leaf chain must be exactly the
// leaves in key order. Anything else throws damaged_pool (region "incll tree"). Validation of
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
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/incll_words.hpp"
#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::index {
namespace {

namespace layout = incll_layout;
namespace words = incll_words;

[[noreturn]] void damaged(const std::string& what) { throw_damaged(pool_errc::damaged_object, "incll tree", "", what); }

std::string num(std::uint64_t v) { return std::to_string(v); }

class recovery {
public:
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

    incll_recovered run() {
        check_geometry();
        check_commit();
        const std::vector<const layout::log_entry*> entries = entries_to_roll_back();
        for (const auto* e : entries) {
            auto* node = region_ + e->node;
            auto* w = reinterpret_cast<std::uint64_t*>(node);
            for (unsigned i = 0; i < layout::node_bytes / 8; ++i)
                std::atomic_ref<std::uint64_t>(w[i]).store(e->image[i], std::memory_order_relaxed);
            pmem::pwb_range(node, layout::node_bytes);
        }
        // No fence here: the per-leaf rollback below writes some of the same lines after the
        // images (same-line order keeps them in order) and a rerun applies both again; one
        // fence after both orders them before the commit line.

        visited_.assign(allocated_, false);
        node_base* root = node_at(root_offset_, "the root");
        walk(root, nullptr, 0, true);
        check_chain();
        if (wrote_ || !entries.empty()) pmem::pfence();  // the rollback is durable before the commit line names D+1

        auto& c = commit();
        c.slots[(d_ + 1) & 1] = c.slots[d_ & 1];
        std::atomic_ref<std::uint64_t>(c.durable_epoch).store(d_ + 1, std::memory_order_release);
        pmem::pwb(&c);
        pmem::pfence();
        return incll_recovered{root, leaf_depth_ + 1};
    }

private:
    layout::commit_line& commit() const noexcept { return *reinterpret_cast<layout::commit_line*>(region_ + 64); }

    void check_geometry() {
        if (bytes_ < layout::header_bytes) damaged("the region (" + num(bytes_) + " bytes) is smaller than its header");
        if (reinterpret_cast<std::uintptr_t>(region_) % 64 != 0) damaged("the region is not 64-byte aligned");
        std::memcpy(&g_, region_, sizeof(g_));
        if (g_.magic != layout::magic) damaged("no durable tree here (bad magic; or its create was interrupted)");
        if (g_.version != layout::layout_version) damaged("layout version " + num(g_.version) + " is not 1");
        if (g_.region_bytes != bytes_) damaged("made for " + num(g_.region_bytes) + " bytes, opened with " + num(bytes_));
        if (g_.shards == 0 || g_.shards > 4096) damaged("shard count " + num(g_.shards) + " out of range");
        if (g_.log_entries < 24 || g_.log_entries > (1u << 20)) damaged("log entries " + num(g_.log_entries) + " out of range");
        if (g_.logs_offset != layout::header_bytes) damaged("log offset " + num(g_.logs_offset));
        if (g_.arena_offset != layout::bytes_for(g_.shards, g_.log_entries, 0)) damaged("arena offset " + num(g_.arena_offset));
        if (g_.arena_offset > bytes_ || g_.arena_nodes > (bytes_ - g_.arena_offset) / layout::node_bytes || g_.arena_nodes == 0)
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
    }

    std::vector<const layout::log_entry*> entries_to_roll_back() const {
        std::vector<const layout::log_entry*> out;
        const auto* logs = reinterpret_cast<const layout::log_entry*>(region_ + g_.logs_offset);
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
        return rel % layout::node_bytes == 0 && rel / layout::node_bytes < allocated_;
    }
    node_base* node_at(std::uint64_t off, const char* what) const {
        if (!is_node_offset(off)) damaged(std::string(what).append(" is at offset ").append(num(off)).append(", not an allocated node"));
        return reinterpret_cast<node_base*>(region_ + off);
    }
    template <class T>
    node_base* follow(const atomic_rel_ptr<T>& link, const char* what) const {
        const std::int64_t d = link.raw();
        const auto from = static_cast<std::int64_t>(reinterpret_cast<const std::byte*>(&link) - region_);
        if (d == 0) damaged(std::string(what).append(" is null"));
        return node_at(static_cast<std::uint64_t>(from + d), what);
    }

    void walk(node_base* n, interior* parent, unsigned depth, bool is_root) {
        const std::uint64_t index = (static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(n) - region_) - g_.arena_offset) /
                                    layout::node_bytes;
        if (visited_[index]) damaged("node " + num(index) + " is reachable twice");
        visited_[index] = true;
        if (depth > 64) damaged("the tree is deeper than 64 levels");
        const std::uint64_t v = n->version.peek();
        n->parent.store(parent, std::memory_order_relaxed);
        if (node_version::is_leaf(v)) {
            if (leaves_.empty()) leaf_depth_ = depth;
            else if (depth != leaf_depth_) damaged("leaves at depths " + num(leaf_depth_) + " and " + num(depth));
            auto* l = static_cast<leaf*>(n);
            roll_back(l, index);
            new (&l->version) node_version(node_version::leaf_bit | (is_root ? node_version::root_bit : 0));
            l->modstate = leaf::modstate_insert;
            l->dirty_epoch = l->logged_epoch = 0;
            leaves_.push_back(l);
            return;
        }
        auto* in = static_cast<interior*>(n);
        const std::uint64_t k = in->nkeys.load(std::memory_order_relaxed);
        if (k == 0 || k > interior::max_keys) damaged("interior node " + num(index) + " holds " + num(k) + " keys");
        for (std::uint64_t i = 1; i < k; ++i)
            if (in->keys[i - 1].load(std::memory_order_relaxed) >= in->keys[i].load(std::memory_order_relaxed))
                damaged("interior node " + num(index) + "'s keys are out of order");
        new (&in->version) node_version(is_root ? node_version::root_bit : 0);
        in->dirty_epoch = in->logged_epoch = 0;
        for (std::uint64_t i = 0; i <= k; ++i) walk(follow(in->children[i], "a child link"), in, depth + 1, false);
    }

    void roll_back(leaf* l, std::uint64_t index) {
        const std::uint64_t ne = l->node_epoch.load(std::memory_order_relaxed);
        if (ne > d_ + 1) damaged("leaf " + num(index) + " has node epoch " + num(ne) + " after the running one");
        if (ne == d_ + 1) {
            const std::uint64_t old = l->permutation_incll.load(std::memory_order_relaxed);
            if (!words::valid_permutation(old, leaf::width)) damaged("leaf " + num(index) + "'s permutation undo word is not a permutation");
            l->perm.store(old, std::memory_order_relaxed);
            l->node_epoch.store(0, std::memory_order_release);  // after the permutation, in its line
            pmem::pwb(&l->perm);
            wrote_ = true;
        }
        if (!words::valid_permutation(l->perm.load(std::memory_order_relaxed), leaf::width))
            damaged("leaf " + num(index) + "'s permutation is not a permutation");
        for (auto& line : l->value_lines) {
            const std::uint64_t w = line.value_incll.load(std::memory_order_relaxed);
            if (w == 0) continue;
            const auto u = words::decode(w);
            if (u->index >= leaf::values_per_line) damaged("leaf " + num(index) + " has an undo word for slot index " + num(u->index));
            if (words::same_epoch(u->low_epoch, d_ + 1))
                line.values[u->index].store(u->old_value, std::memory_order_relaxed);
            line.value_incll.store(0, std::memory_order_release);  // after the value, in its line
            pmem::pwb(&line);
            wrote_ = true;
        }
    }

    void check_chain() const {
        if (leaves_.front()->low_key != 0) damaged("the first leaf's low key is not 0");
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
    layout::geometry g_{};
    std::uint64_t d_ = 0, allocated_ = 0, root_offset_ = 0;
    std::vector<bool> visited_;
    std::vector<leaf*> leaves_;
    unsigned leaf_depth_ = 0;
    bool wrote_ = false;
};

}  // namespace

incll_recovered incll_recover(std::byte* region, std::uint64_t bytes) { return recovery(region, bytes).run(); }

incll_summary incll_check(const std::byte* region, std::uint64_t bytes) {
    return recovery(const_cast<std::byte*>(region), bytes).check();  // check() writes nothing
}

}  // namespace ferrite::index
