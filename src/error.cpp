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
    }
    return "?";
}

}  // namespace ferrite
