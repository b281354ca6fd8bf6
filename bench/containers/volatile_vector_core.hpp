// bench/containers/volatile_vector_core.hpp: the vector's combining pass on DRAM with no
// persistence at all (no pwb, no fence, no logs, std::vector storage): `vector-volatile`,
// the upper bound the PFC thesis compares persistent combining to. Same request/response
// types, same elimination, same order of a pass as persistent_vector_core.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "ferrite/combining/publication.hpp"
#include "ferrite/containers/vector_ops.hpp"

namespace ferrite::bench {

template <class T>
class volatile_vector_core {
public:
    using request = containers::vector_request<T>;
    using response = containers::vector_response<T>;
    using slot_type = combining::slot<request, response>;

    explicit volatile_vector_core(bool elimination) : elimination_(elimination) {}

    void combine(std::span<slot_type*> batch) noexcept {
        pushes_.clear();
        pops_.clear();
        for (auto* s : batch) {
            const auto& rq = s->request;
            auto& r = s->response;
            switch (rq.op) {
                case containers::vector_op::size: r = {true, {}, data_.size()}; break;
                case containers::vector_op::capacity: r = {true, {}, data_.capacity()}; break;
                case containers::vector_op::get:
                    r = {rq.a < data_.size(), rq.a < data_.size() ? data_[rq.a] : T{}, 0};
                    break;
                case containers::vector_op::swap:
                    r = {rq.a < data_.size() && rq.b < data_.size(), {}, 0};
                    if (r.ok) std::swap(data_[rq.a], data_[rq.b]);
                    break;
                case containers::vector_op::reserve: data_.reserve(rq.a); r = {true, {}, 0}; break;
                case containers::vector_op::push_back: pushes_.push_back(s); break;
                case containers::vector_op::pop_back: pops_.push_back(s); break;
            }
        }
        const std::size_t eliminated = elimination_ ? std::min(pushes_.size(), pops_.size()) : 0;
        for (std::size_t i = 0; i < eliminated; ++i) {
            pushes_[i]->response = {true, {}, 0};
            pops_[i]->response = {true, pushes_[i]->request.value, 0};
        }
        for (std::size_t i = eliminated; i < pushes_.size(); ++i) {
            data_.push_back(pushes_[i]->request.value);
            pushes_[i]->response = {true, {}, 0};
        }
        for (std::size_t i = eliminated; i < pops_.size(); ++i) {
            pops_[i]->response = {!data_.empty(), data_.empty() ? T{} : data_.back(), 0};
            if (!data_.empty()) data_.pop_back();
        }
    }

private:
    bool elimination_;
    std::vector<T> data_;
    std::vector<slot_type*> pushes_, pops_;
};

}  // namespace ferrite::bench
