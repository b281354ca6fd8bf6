// bench/baselines/pmdk_vector.cpp: `vector-pmdk`, a libpmemobj transactional vector.
//
// Persistent layout: the root object holds {size, capacity, data}; data is an array of
// capacity 64-bit values allocated with pmemobj_tx_alloc. Every modifying operation is one
// PMDK transaction under one std::mutex:
//   push_back  the new slot (past size, unreachable if the transaction aborts: flushed at
//              commit but not undo-logged) + size (undo-logged); at capacity, the array is
//              reallocated at twice the size inside the same transaction
//   pop_back   size (undo-logged)
//   swap       both slots (undo-logged)
//   get        a plain read under the mutex: a read-only transaction would log nothing and
//              flush nothing, only add PMDK's bookkeeping
// Operations on an empty vector do nothing.
#include <cstddef>
#include <cstring>
#include <mutex>

#include "bench/baselines/baselines.hpp"
#include "bench/baselines/pmdk_pool.hpp"

namespace ferrite::bench {
namespace {

struct vector_root {
    std::uint64_t size;
    std::uint64_t capacity;
    PMEMoid data;
};

constexpr std::uint64_t array_type = 1;
constexpr std::size_t slot = sizeof(std::uint64_t);

class pmdk_vector final : public subject {
public:
    explicit pmdk_vector(const subject_config& c)
        : pool_(c.pool_dir, "vector", pmdk::pool_size_for(c.initial_size, slot)),
          root_oid_(pool_.root(sizeof(vector_root))),
          root_(pmdk::direct<vector_root>(root_oid_)) {
        std::uint64_t capacity = 64;
        while (capacity < 2 * c.initial_size) capacity *= 2;
        pmdk::transaction t(pool_.get());
        t.add(root_oid_, 0, sizeof(vector_root));
        root_->data = t.alloc(capacity * slot, array_type);
        auto* d = data();
        for (std::uint64_t i = 0; i < c.initial_size; ++i) d[i] = i;
        root_->capacity = capacity;
        root_->size = c.initial_size;
        t.commit();
    }

    void run(unsigned, op o, std::uint64_t a, std::uint64_t b) override {
        std::lock_guard lock(mutex_);
        switch (o) {
        case op::push_back: push_back(a); break;
        case op::pop_back: pop_back(); break;
        case op::get: get(a); break;
        case op::swap: swap(a, b); break;
        default: break;  // not supported (never issued: see kind().supports)
        }
    }

    bool persistence_counted() const override { return false; }

private:
    std::uint64_t* data() const noexcept { return pmdk::direct<std::uint64_t>(root_->data); }

    void push_back(std::uint64_t v) {
        pmdk::transaction t(pool_.get());
        if (root_->size == root_->capacity) grow(t);
        t.add_unlogged(root_->data, root_->size * slot, slot);
        data()[root_->size] = v;
        t.add(root_oid_, offsetof(vector_root, size), sizeof root_->size);
        ++root_->size;
        t.commit();
    }

    void grow(pmdk::transaction& t) {
        const std::uint64_t capacity = root_->capacity * 2;
        const PMEMoid bigger = t.alloc(capacity * slot, array_type);
        std::memcpy(pmdk::direct<std::uint64_t>(bigger), data(), root_->size * slot);
        t.free(root_->data);
        t.add(root_oid_, 0, sizeof(vector_root));
        root_->data = bigger;
        root_->capacity = capacity;
    }

    void pop_back() {
        if (root_->size == 0) return;
        pmdk::transaction t(pool_.get());
        t.add(root_oid_, offsetof(vector_root, size), sizeof root_->size);
        --root_->size;
        sink_ += data()[root_->size];
        t.commit();
    }

    void get(std::uint64_t i) {
        if (root_->size == 0) return;
        sink_ += data()[i % root_->size];
    }

    void swap(std::uint64_t a, std::uint64_t b) {
        const std::uint64_t n = root_->size;
        if (n == 0 || a % n == b % n) return;
        const std::uint64_t i = a % n, j = b % n;
        pmdk::transaction t(pool_.get());
        t.add(root_->data, i * slot, slot);
        t.add(root_->data, j * slot, slot);
        auto* d = data();
        std::swap(d[i], d[j]);
        t.commit();
    }

    pmdk::pool pool_;
    PMEMoid root_oid_;
    vector_root* root_;
    std::mutex mutex_;
    std::uint64_t sink_ = 0;  // keeps reads from being optimized away
};

}  // namespace

subject_kind pmdk_vector_kind() {
    return {"vector-pmdk",
            "PMDK libpmemobj transactional vector (array + size), one std::mutex",
            {op::push_back, op::pop_back, op::get, op::swap},
            [](const subject_config& c) { return std::make_unique<pmdk_vector>(c); }};
}

}  // namespace ferrite::bench
