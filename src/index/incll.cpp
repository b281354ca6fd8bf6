// src/index/incll.cpp: InCLL's run-time half (incll.hpp): writer shards, the in-line undo
// words, the external undo log, node allocation and the epoch boundary. Recovery is in
// incll_recovery.cpp.
#include "ferrite/index/incll.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/index/incll_words.hpp"
#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::index {
namespace {

namespace layout = incll_layout;
namespace words = incll_words;

std::atomic<unsigned> next_thread_number{0};

// dirty_epoch = (epoch << line_shift) | the lines written (bit i: line i): five lines with
// 8-byte keys (shift 5, as before keys were a parameter), seven with 16-byte keys (shift 8).
template <class K>
constexpr unsigned line_shift = basic_leaf<K>::lines <= 5 ? 5 : 8;
template <class K>
constexpr unsigned all_lines = (1u << basic_leaf<K>::lines) - 1;
static_assert(all_lines<std::uint64_t> == 31 && all_lines<key128> == 127);
constexpr unsigned line_bit(unsigned line) noexcept { return 1u << line; }
template <class K>
constexpr unsigned key_line(unsigned slot) noexcept { return line_bit(basic_leaf<K>::key_line(slot)); }
template <class K>
constexpr unsigned value_line(unsigned slot) noexcept {
    return line_bit(basic_leaf<K>::first_value_line + slot / leaf_constants::values_per_line);
}

template <class K>
std::uint64_t& dirty_epoch_of(node_base* n) noexcept {
    return n->is_leaf() ? static_cast<basic_leaf<K>*>(n)->dirty_epoch : static_cast<basic_interior<K>*>(n)->dirty_epoch;
}
template <class K>
std::uint64_t& logged_epoch_of(node_base* n) noexcept {
    return n->is_leaf() ? static_cast<basic_leaf<K>*>(n)->logged_epoch : static_cast<basic_interior<K>*>(n)->logged_epoch;
}
// The leaf's permutation at the start of the current epoch e.
template <class K>
permutation start_permutation(const basic_leaf<K>* l, std::uint64_t e) noexcept {
    if (l->node_epoch.load(std::memory_order_relaxed) == e)
        return permutation(l->permutation_incll.load(std::memory_order_relaxed));
    return permutation(l->perm.load(std::memory_order_relaxed));
}

}  // namespace

template <class K>
basic_incll<K>::basic_incll(std::byte* region, const incll_options& options)
    : region_(region), options_(options), geometry_(*reinterpret_cast<const layout::geometry*>(region)) {
    shards_ = std::make_unique<shard[]>(geometry_.shards);
    chunk_start_.assign(geometry_.shards + 1, 0);
    auto* logs = reinterpret_cast<log_entry*>(region_ + geometry_.logs_offset);
    for (std::uint64_t i = 0; i < geometry_.shards; ++i) shards_[i].log = logs + i * geometry_.log_entries;
    const std::uint64_t d = durable_epoch();
    epoch_.store(d + 1, std::memory_order_relaxed);
    bump_.store(commit().slots[d & 1].allocated, std::memory_order_relaxed);
}

template <class K>
basic_incll<K>::~basic_incll() {
    stop_ticker();
}

template <class K>
void basic_incll<K>::attach(std::atomic<node_base*>* root, std::atomic<unsigned>* height) {
    root_ = root;
    height_ = height;
}

template <class K>
std::uint64_t basic_incll<K>::durable_epoch() const noexcept {
    return std::atomic_ref<std::uint64_t>(commit().durable_epoch).load(std::memory_order_acquire);
}
template <class K>
std::uint64_t basic_incll<K>::state_epoch() const noexcept {
    const std::uint64_t d = durable_epoch();
    return commit().slots[d & 1].state_epoch;
}

template <class K>
auto basic_incll<K>::mine() noexcept -> shard& {
    thread_local const unsigned number = next_thread_number.fetch_add(1, std::memory_order_relaxed);
    return shards_[number % geometry_.shards];
}

template <class K>
void basic_incll<K>::lock_shard(shard& s) noexcept {
    lock_helping(s.lock);
}

// Waits through pmem::wait_hint (the crash simulator passes its token there), helping with an
// open write-back while the lock is held by an epoch end.
template <class K>
void basic_incll<K>::lock_helping(std::atomic<std::uint32_t>& lock) noexcept {
    for (unsigned spins = 0; lock.exchange(1, std::memory_order_acquire) != 0;) {
        while (lock.load(std::memory_order_relaxed) != 0) {
            if (claim_.load(std::memory_order_relaxed) != 0) write_back_claimed(true);
            pmem::wait_hint();
            if (++spins % 64 == 0) std::this_thread::yield();
        }
    }
}

template <class K>
void basic_incll<K>::write_back_claimed(bool helper) noexcept {
    std::uint64_t claimed = 0;
    std::uint64_t nodes = 0;
    std::uint64_t w = claim_.load(std::memory_order_acquire);
    for (;;) {
        // None open, or every chunk claimed (chunks_ is the open write-back's while w is current:
        // the CAS below fails otherwise).
        if (w == 0 || (w & chunk_mask) >= chunks_.load(std::memory_order_relaxed)) break;
        if (!claim_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        // Chunk (w & chunk_mask) is this thread's: the dirty lists and chunk_start_ were filled
        // under the shard locks the epoch's ender holds, before it opened the word this CAS read.
        const std::uint64_t chunk = w & chunk_mask;
        const std::uint64_t k = static_cast<std::uint64_t>(
            std::upper_bound(chunk_start_.begin(), chunk_start_.end(), chunk) - chunk_start_.begin() - 1);
        const shard& s = shards_[k];
        const std::size_t from = (chunk - chunk_start_[k]) * chunk_nodes_;
        const std::size_t to = std::min(s.dirty.size(), from + chunk_nodes_);
        nodes += to - from;
        for (std::size_t x = from; x < to; ++x) {
            node_base* d = s.dirty[x];
            const std::uint64_t lines = dirty_epoch_of<K>(d) & all_lines<K>;
            const auto* base = reinterpret_cast<const std::byte*>(d);
            for (unsigned line = 0; line < leaf::lines; ++line)
                if (lines & line_bit(line)) {
                    // the epoch's operations dirtied it (log_node's callers, any thread)
                    FERRITE_FLOW_STORED_ELSEWHERE(base + line * pmem::cache_line_size, pmem::cache_line_size);
                    pmem::pwb(base + line * pmem::cache_line_size);
                }
        }
        ++claimed;
        w = claim_.load(std::memory_order_acquire);  // after the pwbs: a locked CAS here would wait for them
    }
    if (claimed == 0) return;
    pmem::pfence();  // this thread's write-backs are durable before its chunks count as done
    written_back_.fetch_add(nodes, std::memory_order_relaxed);
    if (helper) helped_.fetch_add(claimed, std::memory_order_relaxed);
    done_.fetch_add(claimed, std::memory_order_release);
}

template <class K>
basic_incll<K>::op_scope::op_scope(basic_incll* e) : e_(e) {
    shard& s = e->mine();
    for (;;) {
        e->lock_shard(s);
        // Room in the external log for this operation: its leaf and one node per level.
        const unsigned need = e->height_->load(std::memory_order_relaxed) + 2;
        if (s.log_used + need <= e->geometry_.log_entries) return;
        unlock_shard(s);
        e->sync();  // the log is full: end the epoch (which empties every log)
    }
}

template <class K>
basic_incll<K>::op_scope::~op_scope() {
    unlock_shard(e_->mine());
}

template <class K>
void basic_incll<K>::touch(node_base* n, unsigned lines) noexcept {
    const std::uint64_t e = epoch_.load(std::memory_order_relaxed);
    std::uint64_t& d = dirty_epoch_of<K>(n);
    if ((d >> line_shift<K>) == e) {
        d |= lines;
        return;
    }
    d = (e << line_shift<K>) | lines;
    mine().dirty.push_back(n);  // std::bad_alloc here ends the process (noexcept)
}

template <class K>
FERRITE_FLOW_ROOT void basic_incll<K>::log_node(node_base* n) noexcept {
    const std::uint64_t e = epoch_.load(std::memory_order_relaxed);
    std::uint64_t& logged = logged_epoch_of<K>(n);
    if (logged == e) return;
    shard& s = mine();
    log_entry& entry = s.log[s.log_used++];  // op_scope made room
    entry.epoch = e;
    entry.node = offset_of(n);
    auto* words_of_node = reinterpret_cast<std::uint64_t*>(n);
    for (unsigned i = 0; i < node_bytes / 8; ++i)
        entry.image[i] = std::atomic_ref<std::uint64_t>(words_of_node[i]).load(std::memory_order_relaxed);
    std::uint64_t h = pmem::fnv1a64(&entry.epoch, 16);
    entry.checksum = pmem::fnv1a64(entry.image, sizeof(entry.image), h);
    pmem::pwb_range(&entry, sizeof(entry));
    pmem::pfence();  // the entry is durable before the node's first change in this epoch
    logged = e;
    external_.fetch_add(1, std::memory_order_relaxed);
    touch(n, all_lines<K>);  // a logged node may be rewritten whole
}

template <class K>
void basic_incll<K>::before_perm_store(leaf* l) {
    touch(l, line_bit(0));
    if (options_.external_only) return log_node(l);
    const std::uint64_t e = epoch_.load(std::memory_order_relaxed);
    if (l->logged_epoch == e) return;
    if (l->node_epoch.load(std::memory_order_relaxed) != e) {
        // Line 0, in this order (the caller's release store of the permutation comes last).
        l->permutation_incll.store(l->perm.load(std::memory_order_relaxed), std::memory_order_relaxed);
        l->node_epoch.store(e, std::memory_order_release);
    }
}

template <class K>
void basic_incll<K>::before_slot_write(leaf* l, unsigned slot) {
    touch(l, key_line<K>(slot) | value_line<K>(slot));
    if (options_.external_only) return log_node(l);
    const std::uint64_t e = epoch_.load(std::memory_order_relaxed);
    if (l->logged_epoch == e) return;
    if (words::is_live(start_permutation(l, e), slot)) log_node(l);  // insert after remove
}

template <class K>
void basic_incll<K>::before_value_store(leaf* l, unsigned slot) {
    touch(l, value_line<K>(slot));
    if (options_.external_only) return log_node(l);
    const std::uint64_t e = epoch_.load(std::memory_order_relaxed);
    if (l->logged_epoch == e) return;
    if (!words::is_live(start_permutation(l, e), slot)) return;  // inserted in this epoch
    auto& line = l->value_lines[slot / leaf::values_per_line];
    const unsigned index = slot % leaf::values_per_line;
    const auto w = words::decode(line.value_incll.load(std::memory_order_relaxed));
    if (w && words::same_epoch(w->low_epoch, e)) {
        if (w->index != index) log_node(l);  // a second slot of this line in this epoch
        return;
    }
    const std::uint64_t old = line.values[index].load(std::memory_order_relaxed);
    if (old > words::max_logged_value) {
        log_node(l);
        return;
    }
    line.value_incll.store(words::encode(index, old, e), std::memory_order_release);  // before the value
}

template <class K>
void basic_incll<K>::before_rewrite(node_base* n) {
    touch(n, all_lines<K>);
    log_node(n);
}

template <class K>
void basic_incll<K>::reserve(unsigned nodes) {
    shard& s = mine();
    while (s.stock.size() < nodes) {
        std::uint64_t at = bump_.load(std::memory_order_relaxed);
        do {
            if (at >= geometry_.arena_nodes) {
                std::string m = "durable tree: the node arena is full (";
                m.append(std::to_string(geometry_.arena_nodes)).append(" nodes)");
                throw out_of_memory(m);
            }
        } while (!bump_.compare_exchange_weak(at, at + 1, std::memory_order_relaxed));
        s.stock.push_back(region_ + geometry_.arena_offset + at * node_bytes);
    }
}

template <class K>
void* basic_incll<K>::take_node() noexcept {
    shard& s = mine();
    if (s.stock.empty()) {
        // The tree grew by more than one level since reserve() (as the volatile tree's stock).
        const std::uint64_t at = bump_.fetch_add(1, std::memory_order_relaxed);
        if (at >= geometry_.arena_nodes) std::terminate();
        return region_ + geometry_.arena_offset + at * node_bytes;
    }
    void* p = s.stock.back();
    s.stock.pop_back();
    return p;
}

template <class K>
auto basic_incll<K>::make_leaf(std::uint64_t version, K low) noexcept -> leaf* {
    auto* l = new (take_node()) leaf(version, low);
    l->logged_epoch = epoch_.load(std::memory_order_relaxed);  // new: unreachable after a rollback
    touch(l, all_lines<K>);
    return l;
}

template <class K>
auto basic_incll<K>::make_interior(std::uint64_t version) noexcept -> interior* {
    auto* n = new (take_node()) interior(version);
    n->logged_epoch = epoch_.load(std::memory_order_relaxed);
    touch(n, all_lines<K>);
    return n;
}

template <class K>
FERRITE_FLOW_ROOT std::uint64_t basic_incll<K>::sync() {
    lock_helping(advance_);  // a second sync() helps the one in progress
    const std::uint64_t n = geometry_.shards;
    for (std::uint64_t i = 0; i < n; ++i) lock_shard(shards_[i]);
    struct unlock_all {
        basic_incll* e;
        ~unlock_all() {
            for (std::uint64_t i = 0; i < e->geometry_.shards; ++i) unlock_shard(e->shards_[i]);
            e->advance_.store(0, std::memory_order_release);
        }
    } unlocker{this};
    bool any = false;
    for (std::uint64_t i = 0; i < n && !any; ++i) any = !shards_[i].dirty.empty();
    if (!any) return state_epoch();  // nothing written since: that state is durable

    const std::uint64_t e = epoch_.load(std::memory_order_relaxed);
    if (options_.before_commit) options_.before_commit(e);
    // Open the write-back to the writers waiting on their shards, take part, and wait until
    // every shard is written back and fenced by whoever claimed it. No locked instruction
    // between one thread's pwbs: x86 orders clwb/clflushopt before a locked read-modify-write,
    // so one per node (the statistics' counter, once) made each node's write-backs wait.
    // The dirty lists are cut into chunks (of chunk_nodes_ nodes or more; fewer than 2^20 with
    // at most 4096 shards) so that one busy shard is shared too (one writer: ticker and writer).
    std::uint64_t most = 0;
    for (std::uint64_t i = 0; i < n; ++i) most += shards_[i].dirty.size();
    chunk_nodes_ = std::max<std::uint64_t>({std::uint64_t{1}, options_.write_back_chunk, most / 500000 + 1});
    std::uint64_t chunks = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        chunk_start_[i] = chunks;
        chunks += (shards_[i].dirty.size() + chunk_nodes_ - 1) / chunk_nodes_;
    }
    chunk_start_[n] = chunks;
    chunks_.store(chunks, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    claim_.store(e << chunk_bits, std::memory_order_release);
    write_back_claimed(false);
    while (done_.load(std::memory_order_acquire) != chunks) pmem::wait_hint();
    claim_.store(0, std::memory_order_relaxed);
    // every node written in epoch e is durable ...
    auto& c = commit();
    auto& slot = c.slots[e & 1];
    slot.root = offset_of(root_->load(std::memory_order_relaxed));
    slot.allocated = bump_.load(std::memory_order_relaxed);
    slot.state_epoch = e;
    std::atomic_ref<std::uint64_t>(c.durable_epoch).store(e, std::memory_order_release);  // ... before this
    pmem::pwb(&c);
    pmem::pfence();
    commits_.fetch_add(1, std::memory_order_relaxed);
    if (((e + 1) & words::epoch_mask) == 0) scrub_value_words();
    epoch_.store(e + 1, std::memory_order_release);
    for (std::uint64_t i = 0; i < n; ++i) {
        shards_[i].dirty.clear();
        shards_[i].log_used = 0;
    }
    return e;
}

template <class K>
void basic_incll<K>::recover_all() const {
    if (lazy_) lazy_->recover_all(root_->load(std::memory_order_acquire));
}

template <class K>
void basic_incll<K>::finish_recovery() {
    if (lazy_) lazy_->finish(root_->load(std::memory_order_relaxed));
}

template <class K>
void basic_incll<K>::scrub_value_words() {
    // A pending undo word must be applied, not cleared: lazy recovery ends first. (If it
    // finds a damaged node it throws, and this sync() with it: the epoch stays committed.)
    finish_recovery();
    node_base* n = root_->load(std::memory_order_relaxed);
    while (!n->is_leaf()) n = static_cast<interior*>(n)->children[0].load(std::memory_order_relaxed);
    bool wrote = false;
    for (leaf* l = static_cast<leaf*>(n); l != nullptr; l = l->next.load(std::memory_order_relaxed))
        for (auto& line : l->value_lines)
            if (line.value_incll.load(std::memory_order_relaxed) != 0) {
                line.value_incll.store(0, std::memory_order_relaxed);
                pmem::pwb(&line);
                wrote = true;
            }
    if (wrote) pmem::pfence();
}

template <class K>
void basic_incll<K>::start_ticker() {
    if (options_.epoch_length.count() <= 0 || ticker_.joinable()) return;
    ticker_stop_ = false;
    ticker_ = std::thread([this] { ticker_loop(); });
}

template <class K>
void basic_incll<K>::stop_ticker() noexcept {
    if (!ticker_.joinable()) return;
    {
        std::lock_guard g(ticker_mutex_);
        ticker_stop_ = true;
    }
    ticker_cv_.notify_all();
    ticker_.join();
}

template <class K>
void basic_incll<K>::ticker_loop() {
    std::unique_lock g(ticker_mutex_);
    while (!ticker_cv_.wait_for(g, options_.epoch_length, [this] { return ticker_stop_; })) {
        g.unlock();
        try {
            sync();
        } catch (...) {  // a before_commit hook's exception: the next tick tries again
        }
        g.lock();
    }
}

template <class K>
incll_stats basic_incll<K>::statistics() const noexcept {
    stats s;
    s.commits = commits_.load(std::memory_order_relaxed);
    s.nodes_written_back = written_back_.load(std::memory_order_relaxed);
    s.external_entries = external_.load(std::memory_order_relaxed);
    s.shards_helped = helped_.load(std::memory_order_relaxed);
    return s;
}

template class basic_incll<std::uint64_t>;
template class basic_incll<key128>;

}  // namespace ferrite::index
