// ferrite/error.hpp: the exception hierarchy.
//
// Every error that setup or recovery code reports is a std-derived exception whose message
// says what happened and what to do about it. Hot-path operations never throw; they return
// bool / std::optional instead (see DESIGN.md).
//
//   ferrite::error            : std::runtime_error   base of everything ferrite throws
//   ferrite::pool_error       : ferrite::error       a pool file could not be created/opened;
//                                                    kind() tells which case, for programs
//   ferrite::usage_error      : std::invalid_argument bad argument from the caller
//   ferrite::heap_error       : ferrite::error       a persistent heap is damaged or absent
//   ferrite::out_of_memory    : std::bad_alloc       a heap has no free block big enough
//   ferrite::confirm_table_full : ferrite::error     too many unconfirmed (de)allocations
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ferrite {

class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class usage_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Why a pool could not be created or opened. A failed open never modifies the file.
enum class pool_errc {
    not_found,         // no file at the path
    not_a_file,        // a directory, device node, ...
    empty,             // zero-length file
    truncated,         // shorter than its header says (or than a header)
    foreign,           // magic bytes are not ferrite's
    wrong_version,     // a ferrite pool of another format version
    wrong_layout,      // a ferrite pool made for another layout
    corrupted_header,  // header checksum does not match
    locked,            // another process (or another pool object) holds it open
    already_exists,    // create: a file is already at the path
    size_too_small,    // create: below the minimum pool size
    size_too_large,    // create: beyond the maximum, or the file system has no room
    bad_layout_name,   // create: layout name empty or too long
    root_mismatch,     // root<T>() with a type whose size differs from the stored root
    out_of_space,      // the pool has no room for the request
    io,                // an operating-system call failed (errno in the message)
};

std::string_view to_string(pool_errc) noexcept;

// A persistent heap (ferrite/alloc) could not be opened or was found damaged.
class heap_error : public error {
public:
    using error::error;
};

// A heap cannot satisfy an allocation: it is derived from std::bad_alloc so that code which
// handles running out of memory handles this too; what() says how much was asked and what
// is free.
class out_of_memory : public std::bad_alloc {
public:
    explicit out_of_memory(std::string message) : message_(std::move(message)) {}
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

// Every confirm slot of a heap holds an unconfirmed allocation or deallocation: confirm
// some (or create the heap with more slots).
class confirm_table_full : public error {
public:
    using error::error;
};

class pool_error : public error {
public:
    pool_error(pool_errc kind, const std::string& message) : error(message), kind_(kind) {}
    pool_errc kind() const noexcept { return kind_; }

private:
    pool_errc kind_;
};

}  // namespace ferrite
