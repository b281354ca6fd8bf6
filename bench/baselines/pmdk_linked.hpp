// bench/baselines/pmdk_linked.hpp: what the PMDK linked baselines (stack-pmdk, queue-pmdk)
// share: a pool with a root object, filling in batches of transactions, and the dispatch of
// one operation as one PMDK transaction under one std::mutex. The structure supplies
//   void push(pmdk::transaction&, std::uint64_t value)   link a new node, update the root
//   bool empty() const                                   nothing to pop
//   std::uint64_t pop(pmdk::transaction&)                unlink one node, free it, its value
// (CRTP: Derived is the structure). Pops on an empty structure do nothing, not even begin a
// transaction.
#pragma once

#include <mutex>

#include "bench/baselines/pmdk_pool.hpp"
#include "bench/subject.hpp"

namespace ferrite::bench {

template <class Derived, class Root, op Pop>
class pmdk_linked_subject : public subject {
public:
    void run(unsigned, op o, std::uint64_t a, std::uint64_t) override {
        std::lock_guard lock(mutex_);
        if (o == op::push_back) {
            pmdk::transaction t(pool_.get());
            self().push(t, a);
            t.commit();
        } else if (o == Pop && !self().empty()) {
            pmdk::transaction t(pool_.get());
            sink_ += self().pop(t);  // keeps the read from being optimized away
            t.commit();
        }  // other operations are never issued (see the kind's supports list)
    }

    bool persistence_counted() const override { return false; }

protected:
    pmdk_linked_subject(const subject_config& c, const char* name)
        : pool_(c.pool_dir, name, pmdk::pool_size_for(c.initial_size, 64)),
          root_oid_(pool_.root(sizeof(Root))),
          root_(pmdk::direct<Root>(root_oid_)) {}

    // Push 0..n-1, many nodes per transaction (called by Derived's constructor).
    void fill(std::uint64_t n) {
        constexpr std::uint64_t batch = 256;
        for (std::uint64_t done = 0; done < n;) {
            pmdk::transaction t(pool_.get());
            for (std::uint64_t k = 0; k < batch && done < n; ++k, ++done) self().push(t, done);
            t.commit();
        }
    }

    pmdk::pool pool_;
    PMEMoid root_oid_;
    Root* root_;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::mutex mutex_;
    std::uint64_t sink_ = 0;
};

}  // namespace ferrite::bench
