// Internal: how backend.cpp and primitives.cpp share the resolved backend. Not public API.
#pragma once

#include "ferrite/pmem/backend.hpp"

namespace ferrite::pmem::detail {

void resolve_backend_once() noexcept;
backend resolved_backend() noexcept;
// Recompute the hot-path mode from the backend and whether an observer is installed.
void refresh_mode() noexcept;

}  // namespace ferrite::pmem::detail
