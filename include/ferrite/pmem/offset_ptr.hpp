// ferrite/pmem/offset_ptr.hpp: a pointer that stays valid when the pool is mapped elsewhere.
//
// A pool can be mapped at a different address on every open, so raw pointers must never be
// stored in it. offset_ptr<T> stores the distance from its own address to the target
// (self-relative, as boost::interprocess::offset_ptr and libpmemobj-cpp's
// self_relative_ptr): it needs no pool lookup to dereference and survives being copied
// along with the pool image (which the crash simulator does). The stored word is the distance
// minus one, so that the stored value 0 means null: zero-filled pool memory (a fresh root)
// holds null pointers, and a pointer may still point at itself (stored -1), as the head of an
// empty circular list does. The only distance that cannot be stored is +1, a target inside
// the pointer itself.
//
// Crash consistency: the 8-byte offset is written with one aligned store, so a torn pointer
// is impossible (8-byte stores are atomic with respect to persistence). It is not atomic with
// respect to other threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferrite::pmem {

template <class T>
class offset_ptr {
public:
    using element_type = T;

    offset_ptr() noexcept = default;
    offset_ptr(std::nullptr_t) noexcept {}
    offset_ptr(T* p) noexcept { set(p); }
    offset_ptr(const offset_ptr& o) noexcept { set(o.get()); }
    offset_ptr& operator=(const offset_ptr& o) noexcept { set(o.get()); return *this; }
    offset_ptr& operator=(T* p) noexcept { set(p); return *this; }
    offset_ptr& operator=(std::nullptr_t) noexcept { off_ = null_offset; return *this; }

    T* get() const noexcept {
        if (off_ == null_offset) return nullptr;
        return reinterpret_cast<T*>(reinterpret_cast<std::intptr_t>(this) + off_ + 1);
    }
    T* operator->() const noexcept { return get(); }
    T& operator*() const noexcept { return *get(); }
    explicit operator bool() const noexcept { return off_ != null_offset; }
    friend bool operator==(const offset_ptr& a, const offset_ptr& b) noexcept { return a.get() == b.get(); }
    friend bool operator==(const offset_ptr& a, std::nullptr_t) noexcept { return !a; }

    // The stored word (distance to the target minus one; 0 = null), for logging it.
    std::int64_t raw() const noexcept { return off_; }

private:
    static constexpr std::int64_t null_offset = 0;
    void set(T* p) noexcept {
        off_ = p ? reinterpret_cast<std::intptr_t>(p) - reinterpret_cast<std::intptr_t>(this) - 1
                 : null_offset;
    }
    std::int64_t off_ = null_offset;  // persistent
};

static_assert(sizeof(offset_ptr<int>) == 8, "offset_ptr must be one 8-byte word");

}  // namespace ferrite::pmem
