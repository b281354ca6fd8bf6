// Parsing of size arguments such as "64M", "1G", "4096", "512KiB" (binary multiples).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ferrite::cli {

// Bytes, or nullopt if the text is not a size (empty, negative, unknown suffix, overflow).
std::optional<std::uint64_t> parse_size(std::string_view text) noexcept;

}  // namespace ferrite::cli
