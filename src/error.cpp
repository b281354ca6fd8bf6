// Names of pool error kinds (see ferrite/error.hpp).
#include "ferrite/error.hpp"

namespace ferrite {

std::string_view to_string(pool_errc e) noexcept {
    switch (e) {
        case pool_errc::not_found: return "not_found";
        case pool_errc::not_a_file: return "not_a_file";
        case pool_errc::empty: return "empty";
        case pool_errc::truncated: return "truncated";
        case pool_errc::foreign: return "foreign";
        case pool_errc::wrong_version: return "wrong_version";
        case pool_errc::wrong_layout: return "wrong_layout";
        case pool_errc::corrupted_header: return "corrupted_header";
        case pool_errc::locked: return "locked";
        case pool_errc::already_exists: return "already_exists";
        case pool_errc::size_too_small: return "size_too_small";
        case pool_errc::size_too_large: return "size_too_large";
        case pool_errc::bad_layout_name: return "bad_layout_name";
        case pool_errc::root_mismatch: return "root_mismatch";
        case pool_errc::out_of_space: return "out_of_space";
        case pool_errc::io: return "io";
        case pool_errc::damaged_state: return "damaged_state";
        case pool_errc::damaged_heap: return "damaged_heap";
        case pool_errc::damaged_catalog: return "damaged_catalog";
        case pool_errc::damaged_object: return "damaged_object";
        case pool_errc::unknown_kind: return "unknown_kind";
        case pool_errc::type_mismatch: return "type_mismatch";
        case pool_errc::unfinished: return "unfinished";
    }
    return "?";
}

void throw_damaged(pool_errc kind, std::string_view region, std::string_view object, const std::string& what) {
    std::string message(region);
    if (!object.empty()) message += " '" + printable(object) + "'";
    message += ": " + what;
    throw damaged_pool(kind, std::string(region), std::string(object), message);
}

std::string printable(std::string_view text) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f && u != '\\') {
            out += c;
        } else {
            out += "\\x";
            out += digits[u >> 4];
            out += digits[u & 15];
        }
    }
    return out;
}

}  // namespace ferrite
