// ferrite/containers/combined.hpp: what every combining container handle holds: the engine
// (which owns the persistent core), on the heap so that its address never moves.
//
// ferrite::vector, stack and deque are thin handles: their operations build a request, hand
// it to the engine (apply), and turn the response into bool / optional (value_if). This is
// that shared part; the engine is a member, never a base (docs/design.md). A response that
// carries an exception (`error`, set by the combiner when, e.g., the heap refused a growth)
// is rethrown here, in the thread whose operation failed: the combiner runs other threads'
// operations and must not throw, and nothing may swallow the failure.
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include "ferrite/combining/stats.hpp"

namespace ferrite::containers {

template <class Core, class EngineSelector>
class combined {
public:
    using engine = typename EngineSelector::template engine<Core>;
    using request = typename Core::request;
    using response = typename Core::response;

    template <class... Args>
    explicit combined(Args&&... args) : engine_(std::make_unique<engine>(std::forward<Args>(args)...)) {}

    // The engine's response; rethrows the exception it carries, if any.
    response apply(const request& r) {
        response out = engine_->apply(r);
        if constexpr (requires { out.error; })
            if (out.error) std::rethrow_exception(out.error);
        return out;
    }
    // The response's value if the operation succeeded (ok), else nullopt.
    static auto value_if(const response& r) {
        using value = decltype(r.value);
        return r.ok ? std::optional<value>(r.value) : std::nullopt;
    }

    Core& core() noexcept { return engine_->structure(); }
    const Core& core() const noexcept { return engine_->structure(); }
    // The engine's record (combining/stats.hpp); mean_batch_size() reads it.
    combining::combining_stats stats() const noexcept { return engine_->stats(); }
    double mean_batch_size() const noexcept { return stats().mean_batch_size(); }

private:
    std::unique_ptr<engine> engine_;  // the engine holds the core; its address must not move
};

}  // namespace ferrite::containers
