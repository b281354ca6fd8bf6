// src/index/durable_tree.cpp: the durable tree's life (durable_tree.hpp): formatting a
// region, opening one (recovery first: incll_recovery.cpp), closing (a last sync).
//
// create()'s commit point is the geometry's magic word: everything else (the logs' epoch
// words, the root leaf, the commit line naming epoch 1) is written back and fenced before
// the magic is stored, written back and fenced. A region without the magic is refused by
// open() as damaged.
#include "ferrite/index/durable_tree.hpp"

#include <new>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::index {
namespace {

namespace layout = incll_layout;

void check_options(const incll_options& o) {
    if (o.shards == 0 || o.shards > 4096) throw usage_error("durable tree: shards must be 1..4096");
    if (o.log_entries < 24 || o.log_entries > (1u << 20)) throw usage_error("durable tree: log entries must be 24..2^20");
}

}  // namespace

template <class K>
std::uint64_t basic_durable_tree<K>::region_bytes(std::uint64_t nodes, const incll_options& options) {
    check_options(options);
    return layout::bytes_for<K>(options.shards, options.log_entries, nodes);
}

template <class K>
auto basic_durable_tree<K>::create(std::byte* region, std::uint64_t bytes, incll_options options) -> std::unique_ptr<durable_tree> {
    check_options(options);
    if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0) throw usage_error("durable tree: the region must be 64-byte aligned");
    constexpr std::uint64_t node_bytes = node_bytes_of<K>;
    const std::uint64_t fixed = layout::bytes_for<K>(options.shards, options.log_entries, 0);
    if (bytes < fixed + 4 * node_bytes) throw usage_error("durable tree: the region is too small");
    layout::geometry g{};
    g.magic = 0;
    g.version = layout::version_of<K>;
    g.region_bytes = bytes;
    g.shards = options.shards;
    g.log_entries = options.log_entries;
    g.logs_offset = layout::header_bytes;
    g.arena_offset = fixed;
    g.arena_nodes = (bytes - fixed) / node_bytes;
    auto* geometry = reinterpret_cast<layout::geometry*>(region);
    *geometry = g;
    auto* logs = reinterpret_cast<layout::basic_log_entry<K>*>(region + g.logs_offset);
    for (std::uint64_t i = 0; i < g.shards * g.log_entries; ++i) {
        logs[i].epoch = 0;
        pmem::pwb(&logs[i]);
    }
    auto* root = new (region + g.arena_offset) basic_leaf<K>(node_version::root_bit, K{});
    pmem::pwb_range(root, node_bytes);
    auto* c = reinterpret_cast<layout::commit_line*>(region + 64);
    *c = layout::commit_line{};
    c->slots[1] = layout::commit_slot{g.arena_offset, 1, 1};
    c->durable_epoch = 1;
    pmem::pwb(c);
    pmem::pwb(geometry);
    pmem::pfence();
    geometry->magic = layout::magic;  // the commit point
    pmem::pwb(geometry);
    pmem::pfence();
    // Nothing can be pending in a new tree: recover it eagerly (one leaf), so that the commit
    // line names no pending epoch and the next open after a crash may be lazy.
    basic_incll_recovered<K> r = incll_recover<K>(region, bytes, false);
    return std::unique_ptr<durable_tree>(new durable_tree(region, options, std::move(r)));
}

template <class K>
auto basic_durable_tree<K>::open(std::byte* region, std::uint64_t bytes, incll_options options) -> std::unique_ptr<durable_tree> {
    check_options(options);
    basic_incll_recovered<K> r = incll_recover<K>(region, bytes, options.lazy_recovery);
    return std::unique_ptr<durable_tree>(new durable_tree(region, options, std::move(r)));
}

template <class K>
basic_durable_tree<K>::basic_durable_tree(std::byte* region, const incll_options& options, basic_incll_recovered<K> r)
    : engine_(std::make_unique<basic_incll<K>>(region, options)) {
    engine_->adopt(std::move(r.lazy));
    tree_ = std::make_unique<basic_tree<K>>(*engine_, r.root, r.height);
    engine_->start_ticker();
}

template <class K>
basic_durable_tree<K>::~basic_durable_tree() {
    engine_->stop_ticker();
    try {
        engine_->finish_recovery();  // a clean close leaves nothing pending: the next open is lazy again
    } catch (...) {  // a damaged node: left pending (the next open recovers eagerly and reports it)
    }
    try {
        engine_->sync();
    } catch (...) {  // a before_commit hook's: the epoch stays undone, as after a crash
    }
}

template class basic_durable_tree<std::uint64_t>;
template class basic_durable_tree<key128>;

}  // namespace ferrite::index
