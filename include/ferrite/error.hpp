// ferrite/error.hpp: the exception hierarchy.
//
// Every error that setup or recovery code reports is a std-derived exception whose message
// says what happened and what to do about it. Hot-path operations never throw; they return
// bool / std::optional instead (docs/design.md, "House style").
//
//   ferrite::error            : std::runtime_error   base of everything ferrite throws
//   ferrite::pool_error       : ferrite::error       a pool file could not be created/opened,
//                                                    or what it holds failed validation;
//                                                    kind() tells which case, for programs
//   ferrite::damaged_pool     : ferrite::pool_error  data read back from a pool failed
//                                                    validation: region() and object() say where
//   ferrite::heap_error       : ferrite::damaged_pool a persistent heap is damaged or absent
//   ferrite::usage_error      : std::invalid_argument bad argument from the caller (a mistake in
//                                                    the program, never damaged media)
//
// The line between the two families: usage_error is the caller's mistake (the CLI exits 2,
// "bad usage"); pool_error is what the file holds or the system says (the CLI exits 1).
//   ferrite::out_of_memory    : std::bad_alloc       a heap has no free block big enough
//   ferrite::confirm_table_full : ferrite::error     too many unconfirmed (de)allocations
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

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
    // Damaged media (class damaged_pool): a validator found a value it cannot use as a size,
    // an offset or a pointer. Nothing was written; restore the pool from a copy.
    damaged_state,     // the header's state line (root, data-top, profile words) or roots table
    damaged_heap,      // the buddy heap's header, free lists, block map, log or confirm slots
    damaged_catalog,   // the name directory's blocks or entries
    damaged_object,    // a named (or anchored) structure's header, log, links or data
    // What the pool holds, read correctly, but not what the caller asked for.
    unknown_kind,      // a named object of a kind this build does not know (a newer ferrite)
    type_mismatch,     // a named object of another kind or element type than requested
    unfinished,        // a create was interrupted before the pool was usable
};

std::string_view to_string(pool_errc) noexcept;

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

// Data read back from a pool failed validation before it was used. region() names the part
// of the pool ("header state", "heap", "catalog", "vector", "dfc_queue", ...), object() the
// named object it belongs to ("" when none). Nothing was written: the file is byte-identical.
class damaged_pool : public pool_error {
public:
    damaged_pool(pool_errc kind, std::string region, std::string object, const std::string& message)
        : pool_error(kind, message), region_(std::move(region)), object_(std::move(object)) {}
    const std::string& region() const noexcept { return region_; }
    const std::string& object() const noexcept { return object_; }

private:
    std::string region_;
    std::string object_;
};

// A persistent heap (ferrite/alloc) could not be opened or was found damaged.
class heap_error : public damaged_pool {
public:
    explicit heap_error(const std::string& message) : damaged_pool(pool_errc::damaged_heap, "heap", "", message) {}
};

// Throws damaged_pool for `object` (may be empty) of `region`: "<region> '<object>': what".
[[noreturn]] void throw_damaged(pool_errc kind, std::string_view region, std::string_view object,
                                const std::string& what);

// `text` with control characters and non-ASCII bytes as \xNN escapes: names read from a pool
// are printed through it, so a damaged or hostile name cannot drive the terminal.
std::string printable(std::string_view text);

}  // namespace ferrite
