// bench/baselines/pmdk_hash.cpp: `pmdk-hash` (see pmdk_hash.hpp) and its subject kind.
#include "bench/baselines/pmdk_hash.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>

#include "bench/baselines/set_baselines.hpp"
#include "bench/subject.hpp"
#include "ferrite/error.hpp"

namespace ferrite::bench::pmdk {

struct hash_map::root_t {
    PMEMoid table;
    std::uint64_t buckets;
};

struct hash_map::node_t {
    std::uint64_t key;
    std::uint64_t value;
    PMEMoid next;
};

namespace {

constexpr std::uint64_t table_type = 10;
constexpr std::uint64_t node_type = 11;
constexpr std::uint64_t max_stripes = 4096;

std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

hash_map::hash_map(const std::filesystem::path& dir, std::uint64_t buckets, std::uint64_t capacity)
    : pool_(dir, "hash",
            pool_size_for(capacity, 64) + std::bit_ceil(std::max<std::uint64_t>(buckets, 1)) * sizeof(PMEMoid)),
      root_oid_(pool_.root(sizeof(root_t))),
      root_(direct<root_t>(root_oid_)),
      mask_(std::bit_ceil(std::max<std::uint64_t>(buckets, 1)) - 1),
      stripe_count_(std::min(mask_ + 1, max_stripes)),
      stripes_(std::make_unique<stripe[]>(stripe_count_)) {
    // An atomic allocation that publishes the zeroed table in root.table, then the count.
    if (pmemobj_zalloc(pool_.get(), &root_->table, (mask_ + 1) * sizeof(PMEMoid), table_type) != 0)
        throw error("pmemobj_zalloc of the pmdk-hash table failed: " + std::string(pmemobj_errormsg()));
    transaction t(pool_.get());
    t.add(root_oid_, offsetof(root_t, buckets), sizeof(std::uint64_t));
    root_->buckets = mask_ + 1;
    t.commit();
    table_ = direct<PMEMoid>(root_->table);
}

std::uint64_t hash_map::bucket_of(std::uint64_t key) const noexcept { return mix(key) & mask_; }

void hash_map::push(transaction& t, std::uint64_t b, std::uint64_t key, std::uint64_t value) {
    const PMEMoid n = t.alloc(sizeof(node_t), node_type);
    auto* x = direct<node_t>(n);  // a node allocated in the transaction is flushed at commit
    x->key = key;
    x->value = value;
    x->next = table_[b];
    t.add(root_->table, b * sizeof(PMEMoid), sizeof(PMEMoid));
    table_[b] = n;
}

void hash_map::prefill(std::uint64_t n) {
    constexpr std::uint64_t batch = 256;
    for (std::uint64_t i = 0; i < n;) {
        transaction t(pool_.get());
        for (std::uint64_t k = 0; k < batch && i < n; ++k, ++i) push(t, bucket_of(2 * i), 2 * i, i);
        t.commit();
    }
}

bool hash_map::insert(std::uint64_t key, std::uint64_t value) {
    const auto b = bucket_of(key);
    std::lock_guard lock(lock_of(b));
    for (PMEMoid o = table_[b]; !OID_IS_NULL(o);) {
        const auto* x = direct<node_t>(o);
        if (x->key == key) return false;
        o = x->next;
    }
    transaction t(pool_.get());
    push(t, b, key, value);
    t.commit();
    return true;
}

bool hash_map::put(std::uint64_t key, std::uint64_t value) {
    const auto b = bucket_of(key);
    std::lock_guard lock(lock_of(b));
    for (PMEMoid o = table_[b]; !OID_IS_NULL(o);) {
        auto* x = direct<node_t>(o);
        if (x->key == key) {
            transaction t(pool_.get());
            t.add(o, offsetof(node_t, value), sizeof(std::uint64_t));
            x->value = value;
            t.commit();
            return false;
        }
        o = x->next;
    }
    transaction t(pool_.get());
    push(t, b, key, value);
    t.commit();
    return true;
}

bool hash_map::erase(std::uint64_t key) {
    const auto b = bucket_of(key);
    std::lock_guard lock(lock_of(b));
    PMEMoid prev = OID_NULL;  // null: the predecessor link is the table slot
    for (PMEMoid o = table_[b]; !OID_IS_NULL(o);) {
        auto* x = direct<node_t>(o);
        if (x->key != key) {
            prev = o;
            o = x->next;
            continue;
        }
        transaction t(pool_.get());
        if (OID_IS_NULL(prev)) {
            t.add(root_->table, b * sizeof(PMEMoid), sizeof(PMEMoid));
            table_[b] = x->next;
        } else {
            t.add(prev, offsetof(node_t, next), sizeof(PMEMoid));
            direct<node_t>(prev)->next = x->next;
        }
        t.free(o);
        t.commit();
        return true;
    }
    return false;
}

std::optional<std::uint64_t> hash_map::get(std::uint64_t key) {
    const auto b = bucket_of(key);
    std::lock_guard lock(lock_of(b));
    for (PMEMoid o = table_[b]; !OID_IS_NULL(o);) {
        const auto* x = direct<node_t>(o);
        if (x->key == key) return x->value;
        o = x->next;
    }
    return std::nullopt;
}

std::uint64_t hash_map::size() {
    std::uint64_t n = 0;
    for (std::uint64_t b = 0; b <= mask_; ++b) {
        std::lock_guard lock(lock_of(b));
        for (PMEMoid o = table_[b]; !OID_IS_NULL(o); o = direct<node_t>(o)->next) ++n;
    }
    return n;
}

}  // namespace ferrite::bench::pmdk

namespace ferrite::bench {
namespace {

class pmdk_hash_subject final : public subject {
public:
    explicit pmdk_hash_subject(const subject_config& c)
        : map_(c.pool_dir, std::max<std::uint64_t>(c.initial_size, 1024), 2 * c.initial_size + 1024),
          sinks_(std::max(c.threads, 1u)) {
        map_.prefill(c.initial_size);
    }

    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        switch (o) {
            case op::insert: (void)map_.insert(a, b); break;
            case op::erase: (void)map_.erase(a); break;
            case op::put: (void)map_.put(a, b); break;
            case op::contains: sinks_[tid].v += map_.contains(a); break;
            case op::get:
                if (const auto v = map_.get(a)) sinks_[tid].v += *v;
                break;
            default: break;  // not offered: the kind lists what it supports
        }
    }

    bool persistence_counted() const override { return false; }

private:
    pmdk::hash_map map_;
    std::vector<sink> sinks_;
};

}  // namespace

subject_kind pmdk_hash_kind() {
    return {"pmdk-hash",
            "PMDK libpmemobj transactional chained hash map, fixed buckets from --keys, per-bucket locks",
            {op::insert, op::erase, op::contains, op::get, op::put},
            [](const subject_config& c) { return std::make_unique<pmdk_hash_subject>(c); },
            op_family::keyed};
}

}  // namespace ferrite::bench
