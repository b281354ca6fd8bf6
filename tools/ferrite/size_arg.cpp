#include "size_arg.hpp"

#include <cctype>
#include <string>

namespace ferrite::cli {

std::optional<std::uint64_t> parse_size(std::string_view text) noexcept {
    std::size_t i = 0;
    std::uint64_t n = 0;
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        auto digit = static_cast<std::uint64_t>(text[i] - '0');
        if (n > (UINT64_MAX - digit) / 10) return std::nullopt;
        n = n * 10 + digit;
    }
    std::string suffix;
    for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    unsigned shift = 0;
    if (suffix.empty() || suffix == "B") shift = 0;
    else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
    else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
    else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
    else if (suffix == "T" || suffix == "TB" || suffix == "TIB") shift = 40;
    else return std::nullopt;
    if (shift != 0 && n > (UINT64_MAX >> shift)) return std::nullopt;
    return n << shift;
}

}  // namespace ferrite::cli
