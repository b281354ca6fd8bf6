// ferrite/containers/type_tag.hpp: a stable identity for an element type, stored on media.
//
// A named structure records its element type so that reopening it with another type is an
// error instead of a reinterpretation (a vector<double> read as vector<uint64_t>). Size and
// alignment alone cannot tell those apart, so every catalog entry also stores a 32-bit tag:
// FNV-1a of a type name, never 0 (0 marks entries written before tags existed).
//
//   * Arithmetic types have fixed names ("f64", "u64", "i32", "bool", "char", ...), the same
//     on every compiler and build.
//   * Any other type is named by its mangled name (typeid(T).name(): the Itanium C++ ABI,
//     the same for g++ and clang on x86-64), so renaming a type or moving it to another
//     namespace changes its tag. One line pins a name that survives such refactoring:
//
//         struct tick { std::uint64_t time; double price; };
//         FERRITE_PERSISTENT_TYPE(tick, "tick");      // at namespace scope
//
// Not from a paper: the papers' structures hold one-word values of one type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

namespace ferrite {

// Specialise (or use FERRITE_PERSISTENT_TYPE) to pin a type's persistent name.
template <class T>
struct persistent_type_name {};

namespace detail {
constexpr std::uint32_t fnv1a32(std::string_view s) noexcept {
    std::uint32_t h = 2166136261u;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h == 0 ? 1 : h;
}

template <class T>
concept has_persistent_name = requires { persistent_type_name<T>::value; };

template <class T>
constexpr std::string_view arithmetic_name() noexcept {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_same_v<T, char>) return "char";
    else if constexpr (std::is_floating_point_v<T>) {
        if constexpr (sizeof(T) == 4) return "f32";
        else if constexpr (sizeof(T) == 8) return "f64";
        else return "f80";
    } else if constexpr (std::is_signed_v<T>) {
        if constexpr (sizeof(T) == 1) return "i8";
        else if constexpr (sizeof(T) == 2) return "i16";
        else if constexpr (sizeof(T) == 4) return "i32";
        else if constexpr (sizeof(T) == 8) return "i64";
        else return "i128";
    } else {
        if constexpr (sizeof(T) == 1) return "u8";
        else if constexpr (sizeof(T) == 2) return "u16";
        else if constexpr (sizeof(T) == 4) return "u32";
        else if constexpr (sizeof(T) == 8) return "u64";
        else return "u128";
    }
}
}  // namespace detail

// The name a type is stored under (see the header comment).
template <class T>
std::string persistent_name_of() {
    using U = std::remove_cv_t<T>;
    if constexpr (detail::has_persistent_name<U>) return std::string(persistent_type_name<U>::value);
    else if constexpr (std::is_arithmetic_v<U>) return std::string(detail::arithmetic_name<U>());
    else return typeid(U).name();
}

template <class T>
std::uint32_t type_tag_of() {
    static const std::uint32_t tag = detail::fnv1a32(persistent_name_of<T>());
    return tag;
}

// The name of a built-in type's tag ("f64"), or "" for another type (which the catalog
// then shows as its tag number).
std::string_view builtin_type_name(std::uint32_t tag) noexcept;

}  // namespace ferrite

#define FERRITE_PERSISTENT_TYPE(Type, Name)                    \
    template <>                                                \
    struct ferrite::persistent_type_name<Type> {               \
        static constexpr std::string_view value = Name;        \
    }
