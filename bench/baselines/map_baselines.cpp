// bench/baselines/map_baselines.cpp: map-mutex and ordered-map-mutex (see the header).
#include "bench/baselines/map_baselines.hpp"

#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace ferrite::bench {
namespace {

class map_mutex final : public subject {
public:
    explicit map_mutex(const subject_config& c) : sinks_(c.threads) {
        map_.reserve(c.initial_size * 2);
        for (std::uint64_t i = 0; i < c.initial_size; ++i) map_.emplace(prefill_key(i), i);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        std::lock_guard lock(m_);
        switch (o) {
        case op::insert: map_.emplace(a, b); break;
        case op::erase: map_.erase(a); break;
        case op::contains: sinks_[tid].v += map_.contains(a); break;
        case op::get:
            if (const auto it = map_.find(a); it != map_.end()) sinks_[tid].v += it->second;
            break;
        case op::put: map_.insert_or_assign(a, b); break;
        default: break;  // not offered: the kind lists what it supports
        }
    }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        for (const auto& [k, v] : map_) f(k, v);
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    std::mutex m_;
    std::unordered_map<std::uint64_t, std::uint64_t> map_;
    std::vector<sink> sinks_;
};

class ordered_map_mutex final : public subject {
public:
    explicit ordered_map_mutex(const subject_config& c) : sinks_(c.threads) {
        for (std::uint64_t i = 0; i < c.initial_size; ++i) map_.emplace_hint(map_.end(), prefill_key(i), i);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        switch (o) {
        case op::contains: {
            std::shared_lock lock(m_);
            sinks_[tid].v += map_.contains(a);
            break;
        }
        case op::get: {
            std::shared_lock lock(m_);
            if (const auto it = map_.find(a); it != map_.end()) sinks_[tid].v += it->second;
            break;
        }
        case op::scan: {
            std::shared_lock lock(m_);
            auto it = map_.lower_bound(a);
            for (std::uint64_t n = 0; n < b && it != map_.end(); ++n, ++it) sinks_[tid].v += it->second;
            break;
        }
        case op::insert: {
            std::unique_lock lock(m_);
            map_.emplace(a, b);
            break;
        }
        case op::erase: {
            std::unique_lock lock(m_);
            map_.erase(a);
            break;
        }
        case op::put: {
            std::unique_lock lock(m_);
            map_.insert_or_assign(a, b);
            break;
        }
        default: break;
        }
    }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        for (const auto& [k, v] : map_) f(k, v);
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    std::shared_mutex m_;
    std::map<std::uint64_t, std::uint64_t> map_;
    std::vector<sink> sinks_;
};

}  // namespace

subject_kind map_mutex_kind() {
    return {"map-mutex", "volatile std::unordered_map under one std::mutex (keyed baseline; no scan)",
            {op::insert, op::erase, op::contains, op::get, op::put},
            [](const subject_config& c) { return std::make_unique<map_mutex>(c); }, op_family::keyed};
}

subject_kind ordered_map_mutex_kind() {
    return {"ordered-map-mutex",
            "volatile std::map under one std::shared_mutex, reads shared (keyed baseline; scan by lower_bound)",
            {op::insert, op::erase, op::contains, op::get, op::put, op::scan},
            [](const subject_config& c) { return std::make_unique<ordered_map_mutex>(c); }, op_family::keyed};
}

void register_map_baselines(std::vector<subject_kind>& out) {
    out.push_back(map_mutex_kind());
    out.push_back(ordered_map_mutex_kind());
}

}  // namespace ferrite::bench
