// ferrite/containers/dpfc_layout.hpp: the on-media layout of the detectable PFC structures
// (dpfc_stack.hpp: dpfc_stack, dpfc_queue), their validation and their recovery, none of
// which needs the element type. Format 3 (magics "FrDPFCS3", "FrDPFCQ3"; format 2's magics
// were a branch's and stay unused): results packed into the state record.
//
// A region (64-byte aligned, e.g. a pool root or a heap block) holds, line by line:
//
//   line 0        identity: magic, thread ids, capacity (elements), element size   (create)
//   lines 1, 2    state records: epoch, head word {head, redo count, inline count},
//                 size word {size, spilled count}, 4 payload words: the redo
//                 values, then the inline results; a check of those 7 words        (pass commit)
//   lines 3..     one result line per thread id: epoch, seq, name, param,
//                 response {status, value}, voided                    (spill, copy-out)
//   then          the elements, 8 bytes each, in a ring: element k (0 = the stack's bottom,
//                 the queue's front) at (head + k) mod capacity; a stack's head stays 0
//
// State records alternate: a pass writes the record that is not the state. dpfc_commit
// builds it in DRAM, seals it with a check of its seven other words and writes the line
// with NT stores (they persist in no particular order within the line): a record on the
// media whose check matches is whole, one that a crash tore fails it and is never a
// candidate (its epoch counts as 0). A pass's operations' results go into its
// record (INLINE: two words each, {tid, name, failed, seq} packed and one value word, a
// push's param or a pop's value; redo + 2 x inline <= 4, inline <= 2; a seq of 2^46 or
// more never goes inline) or, those that do not fit, SPILLED to the thread's result line,
// stamped with the pass's epoch stored last (`spilled` counts them, up to 255; a pass with
// more fences them before its record and counts 0). Pass E + 1 CARRIES every inline result
// of record E whose thread it does not serve into its own record while it has room, and
// COPIES OUT the others to their threads' lines, stamped E (the record they came from),
// before its pfence; so when pass E + 2 overwrites record E, every thread's latest result
// is in record E + 1 or in its line.
//
// After a crash the newest record (the larger epoch) is the state if its pass committed,
// which the media shows by a line stamped with the next epoch (written only after its
// pfence: a spill of the next pass, or a copy-out from the next record) or by at least
// `spilled` lines stamped with its own epoch (its spills; copy-outs stamped with it are made
// only after its pfence, so they can only add to a committed record's count: a whole record
// with all its spills is committed, fence or not); else the other record, made durable
// before that pass began, is (committed_index). A thread's latest operation
// (dpfc_recovered) is the largest seq among its line, the committed record's inline
// results and the other record's if that one is older and whole: the copy-outs of a
// committed pass may not be durable yet, but then the next pass has not begun and the older
// record is intact. An operation took effect iff it is inline in one of those records, or
// its line's epoch is non-zero, not voided and at most the state's.
//
// Validation (dpfc_validate; open and recovery run it first, writing nothing when it
// throws damaged_pool of kind damaged_object, region "dpfc_stack" or "dpfc_queue"): magic
// (a DFC or another structure's region, or the other kind, is refused; format 1's magics
// "FrDPFCS1"/"FrDPFCQ1" are pool_error wrong_version, naming what to do), thread ids in
// [1, dpfc_max_threads], element size 8, capacity in [1, 2^56) and the region big enough for the
// header, results and elements (overflow checked); at most one state record torn (its check
// fails), the whole ones' epochs differ and the larger is below 2^63; no result's epoch is
// beyond it + 1; the committed record is whole; every whole record's counts: reserved bits
// 0, redo <= 4, inline <= 2, redo + 2 x inline <= 4, spilled <= the thread ids; every inline
// result: tid below the thread ids, seq >= 1, an empty pop's value 0, no tid twice; in the
// committed record size <= capacity, head < capacity (0 for a stack) and redo <= size;
// every result line with a non-zero epoch has seq >= 1, a known operation name, a response
// status its operation can give (push: ack or full; pop: value or empty); one with seq 0
// has every other word 0 too.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

inline constexpr std::uint64_t dpfc_stack_magic = 0x3353'4346'5044'7246ull;  // "FrDPFCS3"
inline constexpr std::uint64_t dpfc_queue_magic = 0x3351'4346'5044'7246ull;  // "FrDPFCQ3"
inline constexpr std::uint64_t dpfc_stack_magic_v1 = 0x3153'4346'5044'7246ull;  // "FrDPFCS1": refused
inline constexpr std::uint64_t dpfc_queue_magic_v1 = 0x3151'4346'5044'7246ull;  // "FrDPFCQ1": refused
inline constexpr std::uint64_t dpfc_max_threads = 1u << 16;
inline constexpr std::uint64_t dpfc_payload_words = 4;  // of a state record: redo values and inline results
inline constexpr std::uint64_t dpfc_redo_room = 4;      // redo values of a state record
inline constexpr std::uint64_t dpfc_inline_room = 2;    // inline results of a state record (2 words each)
inline constexpr std::uint64_t dpfc_spilled_limit = 255;  // spills a record counts (more: fenced first, counted 0)
inline constexpr std::uint64_t dpfc_word_limit = std::uint64_t{1} << 56;  // head, size and capacity stay below
inline constexpr std::uint64_t dpfc_inline_seq_limit = std::uint64_t{1} << 46;  // larger seqs spill
inline constexpr std::uint64_t dpfc_epoch_limit = std::uint64_t{1} << 63;
inline constexpr std::uint64_t dpfc_push_op = 1, dpfc_pop_op = 2;  // odd: a push (as DFC's)

struct alignas(64) dpfc_header {
    std::uint64_t magic;
    std::uint64_t threads;
    std::uint64_t capacity;      // elements
    std::uint64_t element_size;  // 8: elements are words
    std::uint64_t reserved[4];
};

struct alignas(64) dpfc_state {
    std::uint64_t epoch FERRITE_FLOW_SENTINEL;  // of a whole record: the larger is the newest
    std::uint64_t head_word;  // bits 0-55 head (ring slot of element 0; a stack's: 0), 56-58 redo, 59-60 inline, 61-63 zero
    std::uint64_t size_word;  // bits 0-55 size, 56-63 spilled
    std::uint64_t payload[dpfc_payload_words];  // [0, redo) redo values, then inline results (packed, value)
    std::uint64_t check;  // dpfc_record_check of the seven words above: the record is whole iff it matches

    // The seven words' check: a line that a crash tore between two records (NT stores to a
    // line persist in no particular order) mixes words of both and misses it.
    std::uint64_t expected_check() const noexcept {
        std::uint64_t h = 0x243f'6a88'85a3'08d3ull;  // any odd constant: an all-zero line is not whole
        for (const std::uint64_t w : {epoch, head_word, size_word, payload[0], payload[1], payload[2], payload[3]}) {
            h = (h ^ w) * 0x9e37'79b9'7f4a'7c15ull;
            h ^= h >> 29;
        }
        return h;
    }
    void seal() noexcept { check = expected_check(); }
    bool whole() const noexcept { return check == expected_check(); }
    // The epoch if the record is whole, else 0 (a torn record is never a candidate).
    std::uint64_t whole_epoch() const noexcept { return whole() ? epoch : 0; }

    std::uint64_t head() const noexcept { return head_word & (dpfc_word_limit - 1); }
    std::uint64_t size() const noexcept { return size_word & (dpfc_word_limit - 1); }
    std::uint64_t redo() const noexcept { return head_word >> 56 & 7; }
    std::uint64_t inlined() const noexcept { return head_word >> 59 & 3; }
    std::uint64_t spilled() const noexcept { return size_word >> 56; }
    const std::uint64_t* inline_words() const noexcept { return payload + redo(); }
};

struct alignas(64) dpfc_result {
    std::uint64_t epoch;  // stored last: the pass that served the operation, or for a copy-out the record it came from (0: none)
    std::uint64_t seq;    // the thread's operation number, from 1
    std::uint64_t name;
    std::uint64_t param;
    combining::dfc_response response;
    std::uint64_t voided;  // 1: recovery found the pass stamped here uncommitted (stored before the epoch by passes: 0)
    std::uint64_t reserved;
};
static_assert(sizeof(dpfc_header) == 64 && sizeof(dpfc_state) == 64 && sizeof(dpfc_result) == 64);

// An inline result: the packed word {tid: bits 0-15, pop: bit 16, failed (full or empty):
// bit 17, seq: bits 18-63} and the value word (a push's param, a pop's value; 0 if empty).
struct dpfc_inline {
    unsigned tid = 0;
    std::uint64_t seq = 0, name = 0, param = 0;
    combining::dfc_response response;

    static bool fits(std::uint64_t seq) noexcept { return seq < dpfc_inline_seq_limit; }
    // The two words of an operation {tid, seq, name, param} answered `r`; fits(seq).
    static std::uint64_t pack(unsigned tid, std::uint64_t seq, std::uint64_t name, combining::dfc_response r) noexcept {
        using s = combining::dfc_status;
        const bool failed = r.status == s::full || r.status == s::empty;
        return std::uint64_t{tid} | std::uint64_t{name == dpfc_pop_op} << 16 | std::uint64_t{failed} << 17 | seq << 18;
    }
    static std::uint64_t value(std::uint64_t name, std::uint64_t param, combining::dfc_response r) noexcept {
        return name == dpfc_pop_op ? r.value : param;
    }
    static dpfc_inline unpack(std::uint64_t packed, std::uint64_t value) noexcept {
        using s = combining::dfc_status;
        dpfc_inline x;
        x.tid = static_cast<unsigned>(packed & 0xffff);
        x.seq = packed >> 18;
        const bool failed = (packed >> 17 & 1) != 0;
        if ((packed >> 16 & 1) != 0) {
            x.name = dpfc_pop_op;
            x.response = failed ? combining::dfc_response{s::empty, 0} : combining::dfc_response{s::value, value};
        } else {
            x.name = dpfc_push_op;
            x.param = value;
            x.response = {failed ? s::full : s::ack, 0};
        }
        return x;
    }
    static dpfc_inline at(const dpfc_state& st, std::uint64_t i) noexcept {
        return unpack(st.inline_words()[2 * i], st.inline_words()[2 * i + 1]);
    }
};

// The region's parts, at fixed offsets from its start.
struct dpfc_region {
    dpfc_header* header;
    dpfc_state* state;  // [2]
    dpfc_result* results;
    std::uint64_t* elements;

    static constexpr std::size_t results_offset = 3 * 64;
    static constexpr std::size_t elements_offset(std::uint64_t threads) noexcept { return results_offset + threads * 64; }
    static dpfc_region at(void* region, std::uint64_t threads) noexcept {
        auto* b = static_cast<std::byte*>(region);
        return {reinterpret_cast<dpfc_header*>(b), reinterpret_cast<dpfc_state*>(b + 64),
                reinterpret_cast<dpfc_result*>(b + results_offset), reinterpret_cast<std::uint64_t*>(b + elements_offset(threads))};
    }
    // The record with the larger epoch: the state while the structure runs (recovery leaves
    // it so); after a crash, committed_index() decides.
    std::uint64_t newest() const noexcept { return state[1].whole_epoch() > state[0].whole_epoch() ? 1 : 0; }
    // After a crash: the newest record is the state if a result line carries the next epoch
    // (written only after its pass's pfence) or at least `spilled` lines carry its own (its
    // spills; copy-outs stamped with it exist only after its pfence); else the other record.
    // O(threads); validated records only.
    std::uint64_t committed_index() const noexcept {
        const auto n = newest();
        const auto epoch = state[n].whole_epoch();
        std::uint64_t stamped = 0;
        for (std::uint64_t t = 0; t < header->threads; ++t) {
            if (results[t].epoch == epoch + 1) return n;
            stamped += results[t].epoch == epoch;
        }
        return stamped >= state[n].spilled() ? n : 1 - n;
    }
    const dpfc_state& committed() const noexcept { return state[committed_index()]; }
    // The record other than the committed one `cur` if its inline results count (whole and
    // older: its pass committed before the state's), else nullptr.
    const dpfc_state* older(std::uint64_t cur) const noexcept {
        const auto& o = state[1 - cur];
        return o.whole_epoch() != 0 && o.whole_epoch() < state[cur].whole_epoch() ? &o : nullptr;
    }
    // Element k of a state whose head is `head`.
    std::uint64_t& at(std::uint64_t head, std::uint64_t k) const noexcept { return elements[(head + k) % header->capacity]; }
    // Whether the operation of result line `e` took effect under the committed record `st`.
    static bool took_effect(const dpfc_state& st, const dpfc_result& e) noexcept {
        return e.epoch != 0 && e.voided == 0 && e.epoch <= st.epoch;
    }
};

// Bytes for `threads` thread ids and `capacity` elements (0 if that overflows).
constexpr std::size_t dpfc_required_bytes(std::uint64_t threads, std::uint64_t capacity) noexcept {
    if (threads == 0 || threads > dpfc_max_threads || capacity >= dpfc_word_limit) return 0;
    return dpfc_region::elements_offset(threads) + capacity * 8;
}

namespace dpfc_detail {
inline const char* kind_name(std::uint64_t magic) noexcept { return magic == dpfc_queue_magic ? "dpfc_queue" : "dpfc_stack"; }
[[noreturn]] inline void fail(std::uint64_t magic, const std::string& what) {
    throw_damaged(pool_errc::damaged_object, kind_name(magic), "", what + "; restore the pool from a copy");
}
inline std::string word(const char* name, std::uint64_t v) {
    std::string s(name);
    s.append(" = ").append(std::to_string(v));
    return s;
}
inline std::string at(const char* name, std::uint64_t i) {
    std::string s(name);
    s.append("[").append(std::to_string(i)).append("].");
    return s;
}
// A whole state record's counts and inline results (see above).
inline void validate_record(const dpfc_region& r, std::uint64_t i, std::uint64_t magic) {
    const auto& st = r.state[i];
    const auto who = at("state", i);
    if ((st.head_word >> 61) != 0 || st.redo() > dpfc_redo_room || st.inlined() > dpfc_inline_room ||
        st.redo() + 2 * st.inlined() > dpfc_payload_words)
        fail(magic, who + word("head_word", st.head_word) +
                        " has reserved bits set, redo beyond 4 or redo + 2 x inline beyond the record's 4 words");
    if (st.spilled() > r.header->threads) fail(magic, who + word("size_word", st.size_word) + ": spilled exceeds the thread ids");
    for (std::uint64_t k = 0; k < st.inlined(); ++k) {
        const auto x = dpfc_inline::at(st, k);
        const auto j = st.redo() + 2 * k;
        std::string w = who;
        w.append("payload[").append(std::to_string(j)).append("] = ").append(std::to_string(st.payload[j]));
        if (x.tid >= r.header->threads || x.seq == 0 || (x.response.status == combining::dfc_status::empty && st.payload[j + 1] != 0))
            fail(magic, w + " (an inline result: tid " + std::to_string(x.tid) + ", seq " + std::to_string(x.seq) +
                            ") names no thread id, seq 0, or an empty pop with a value");
        for (std::uint64_t m = 0; m < k; ++m)
            if (dpfc_inline::at(st, m).tid == x.tid)
                fail(magic, w + " names tid " + std::to_string(x.tid) + " twice in one record");
    }
}
}  // namespace dpfc_detail

// Read-only: the region of `bytes` bytes at `region`, every word recovery and the operations
// use checked (see above), for the kind `magic` names (dpfc_stack_magic or
// dpfc_queue_magic). Throws damaged_pool naming the first bad word, pool_error
// wrong_version for a format 1 region of the kind, usage_error for a misaligned region.
inline void dpfc_validate(const void* region, std::size_t bytes, std::uint64_t magic) {
    const auto fail = [magic](const std::string& what) { dpfc_detail::fail(magic, what); };
    using dpfc_detail::word;
    const std::string kind = dpfc_detail::kind_name(magic);
    if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
        throw usage_error(kind + ": the region must be 64-byte aligned (e.g. a pool root)");
    if (bytes < dpfc_region::results_offset) fail(word("region bytes", bytes) + " cannot hold a header");
    const auto* h = static_cast<const dpfc_header*>(region);
    if (h->magic == (magic == dpfc_queue_magic ? dpfc_queue_magic_v1 : dpfc_stack_magic_v1)) {
        std::string what = kind;
        what.append(": the region is a ")
            .append(kind)
            .append(" of format 1 (magic ")
            .append(magic == dpfc_queue_magic ? "FrDPFCQ1" : "FrDPFCS1")
            .append(", results in per-thread lines only); this build reads format 3 (results packed into the state "
                    "record) and does not convert it: read the elements with the ferrite release that wrote the "
                    "pool and push them into a new ")
            .append(kind);
        throw pool_error(pool_errc::wrong_version, what);
    }
    if (h->magic != magic) fail(word("magic", h->magic) + " is not a " + kind + "'s (format 3)");
    if (h->threads == 0 || h->threads > dpfc_max_threads) fail(word("threads", h->threads) + " is not in [1, 65536]");
    if (h->element_size != 8) fail(word("element_size", h->element_size) + " is not 8");
    const auto need = dpfc_required_bytes(h->threads, h->capacity);
    if (h->capacity == 0 || need == 0 || need > bytes)
        fail(word("capacity", h->capacity) + " does not fit the " + std::to_string(bytes) + "-byte region");
    const auto r = dpfc_region::at(const_cast<void*>(region), h->threads);
    if (r.state[0].whole_epoch() == r.state[1].whole_epoch())
        fail(r.state[0].whole_epoch() == 0 ? std::string("both state records are torn (no check matches): a crash tears at most one")
                                           : word("state[1].epoch", r.state[1].epoch) +
                                                 " equals state[0].epoch (no pass writes two records with one epoch)");
    const auto newest = r.state[r.newest()].whole_epoch();
    if (newest >= dpfc_epoch_limit) fail(word("state epoch", newest) + " is 2^63 or more");
    for (std::uint64_t t = 0; t < h->threads; ++t)  // before committed() counts them
        if (r.results[t].epoch > newest + 1)
            fail("result[" + std::to_string(t) + "]." + word("epoch", r.results[t].epoch) +
                 " is beyond the newest state epoch " + std::to_string(newest) + " + 1");
    for (std::uint64_t i = 0; i < 2; ++i)
        if (r.state[i].whole_epoch() != 0) dpfc_detail::validate_record(r, i, magic);
    const auto& st = r.committed();
    if (st.whole_epoch() == 0)
        fail(word("state epoch", newest) + " names an uncommitted record and the other record is torn (its check does not match)");
    if (st.size() > h->capacity) fail(word("state size", st.size()) + " exceeds the capacity " + std::to_string(h->capacity));
    if (st.head() >= h->capacity || (magic == dpfc_stack_magic && st.head() != 0))
        fail(word("state head", st.head()) + (magic == dpfc_stack_magic ? " is not 0 (a stack's)" : " is not below the capacity"));
    if (st.redo() > st.size()) fail(word("state redo", st.redo()) + " exceeds the size");
    for (std::uint64_t t = 0; t < h->threads; ++t) {
        const auto& e = r.results[t];
        std::string who = "result[";
        who.append(std::to_string(t)).append("].");
        if (e.epoch == 0 && e.seq == 0) {
            if (e.name != 0 || e.param != 0 || e.response.status != combining::dfc_status::none || e.response.value != 0 ||
                e.voided != 0)
                fail(who + "seq = 0 with other words set (no operation leaves that)");
            continue;
        }
        if (e.voided > 1 || (e.voided == 1 && e.epoch == 0)) fail(who + word("voided", e.voided) + " is not 0, or 1 over an epoch");
        if (e.seq == 0) fail(who + word("epoch", e.epoch) + " with seq 0");
        using s = combining::dfc_status;
        const auto status = e.response.status;
        if (e.name == dpfc_push_op) {
            if (e.epoch != 0 && status != s::ack && status != s::full)
                fail(who + word("response.status", static_cast<std::uint64_t>(status)) + " is no push's response");
        } else if (e.name == dpfc_pop_op) {
            if (e.epoch != 0 && status != s::value && status != s::empty)
                fail(who + word("response.status", static_cast<std::uint64_t>(status)) + " is no pop's response");
        } else {
            fail(who + word("name", e.name) + " is no dpfc_stack operation");
        }
    }
}

// The commit of a pass (and of recovery): the state record that is not the state (slot
// 1 - current) is built in DRAM, {epoch, head, size, payload = the redo values then the
// inline results' words, counts}, sealed with its check, and written as one line of NT
// stores (no read for ownership of a line that an earlier write-back evicted: the pass's
// costliest miss, docs/results.md); pfence (PP). A crash before the fence may leave the line
// torn, any mix of old and new words: its check then fails and it is no candidate. The
// caller has queued the write-backs (spilled results, copy-outs, element lines) it orders.
// Returns the record as written (the combiner's copy of the state: no read of the media).
FERRITE_FLOW_ROOT inline dpfc_state dpfc_commit(dpfc_region r, std::uint64_t current, std::uint64_t epoch, std::uint64_t head,
                                                std::uint64_t size, const std::uint64_t* redo, std::uint64_t redo_count,
                                                const std::uint64_t* inline_words, std::uint64_t inline_count,
                                                std::uint64_t spilled) noexcept {
    dpfc_state line{};
    line.epoch = epoch;
    line.head_word = head | redo_count << 56 | inline_count << 59;
    line.size_word = size | spilled << 56;
    if (redo_count > 0) std::memcpy(line.payload, redo, redo_count * 8);
    if (inline_count > 0) std::memcpy(line.payload + redo_count, inline_words, inline_count * 16);
    line.seal();
    pmem::nt_copy_lines(&r.state[1 - current], &line, sizeof line);
    pmem::pfence();  // PP: the pass (or the recovery) is durable
    return line;
}

// Stores operation `x`'s outcome into thread x.tid's result line, `epoch` last (the line is
// whole on the media if its epoch is), and returns the line: the caller writes it back
// (its own pwb site: a pass's spill and copy-out and recovery's copy-out are mutation-tested
// one by one).
inline dpfc_result& dpfc_store_result(const dpfc_region& r, const dpfc_inline& x, std::uint64_t epoch) noexcept {
    auto& e = r.results[x.tid];
    e.seq = x.seq;
    e.name = x.name;
    e.param = x.param;
    e.response = x.response;
    e.voided = 0;
    std::atomic_signal_fence(std::memory_order_release);  // the epoch persists no earlier
    e.epoch = epoch;
    return e;
}

// Whether inline result `x` of a candidate record is thread x.tid's latest operation and not
// yet in its line: its seq beyond the line's and beyond any inline result of the thread in
// `other` (the other candidate record, or nullptr).
inline bool dpfc_inline_pending(const dpfc_region& r, const dpfc_inline& x, const dpfc_state* other) noexcept {
    if (x.seq <= r.results[x.tid].seq) return false;
    if (other != nullptr)
        for (std::uint64_t k = 0; k < other->inlined(); ++k) {
            const auto y = dpfc_inline::at(*other, k);
            if (y.tid == x.tid && y.seq > x.seq) return false;
        }
    return true;
}

// Recovery, after dpfc_validate. With C the committed record (committed_index), O the other
// record if it is whole and older (dpfc_region::older), the orphans are the lines stamped
// after C (by the pass after C, which did not commit) and not yet voided. If there are any,
// or C is not the newest record, or C holds redo values, or an inline result of O is pending
// (its thread's latest, not in its line: the next pass would overwrite O without copying
// it):
//   1. C's redo values go into the elements; each orphan gets voided = 1 (its epoch stays:
//      it is the evidence committed_index reads; seq, name and param stay for
//      recover(tid)); every pending inline result of C and O is copied out to its thread's
//      line, stamped with its record's epoch (<= C: never an orphan, and only adding to C's
//      evidence); pwb of each; pfence: all durable before a record that no longer carries
//      the redo or the inline results and under which an unvoided orphan would look taken;
//   2. a record {C's head and size, no redo, no inline result, spilled 0} with the fresh
//      epoch C + 2 (beyond every stamp) goes into the other slot (dpfc_commit: sealed, so a
//      torn write fails its check, and an uncommitted newest record is no candidate again). It is committed by construction: no stamp C + 3 is needed, and
//      it spilled nothing.
// Idempotent: a crash before step 2's epoch persisted leaves C committed with its evidence
// intact, and the copy-outs that persisted make those results no longer pending (run
// again); after it, nothing is left to do (C's and O's inline results are in their lines).
// Nothing is written when nothing is to do: then the running passes start from the
// invariant they keep (every thread's latest result is in the state's inline results or
// its line).
FERRITE_FLOW_ROOT inline void dpfc_recover(void* region) noexcept {
    const auto* h = static_cast<const dpfc_header*>(region);
    const auto r = dpfc_region::at(region, h->threads);
    const auto cur = r.committed_index();
    const auto st = r.state[cur];
    const auto* o = r.older(cur);
    const auto orphan = [&](const dpfc_result& e) { return e.epoch > st.epoch && e.voided == 0; };
    bool work = cur != r.newest() || st.redo() != 0;
    for (std::uint64_t t = 0; t < h->threads; ++t) work = work || orphan(r.results[t]);
    if (o != nullptr)
        for (std::uint64_t k = 0; k < o->inlined(); ++k) work = work || dpfc_inline_pending(r, dpfc_inline::at(*o, k), &st);
    if (!work) return;
    for (std::uint64_t i = 0; i < st.redo(); ++i) {
        auto& slot = r.at(st.head(), st.size() - st.redo() + i);
        slot = st.payload[i];
        pmem::pwb(&slot);
    }
    for (std::uint64_t t = 0; t < h->threads; ++t) {
        auto& e = r.results[t];
        if (!orphan(e)) continue;
        e.voided = 1;  // not taken
        pmem::pwb(&e);
    }
    for (const dpfc_state* rec : {&st, o}) {
        if (rec == nullptr) continue;
        const dpfc_state* other = rec == o ? &st : o;
        for (std::uint64_t k = 0; k < rec->inlined(); ++k) {
            const auto x = dpfc_inline::at(*rec, k);
            if (!dpfc_inline_pending(r, x, other)) continue;
            pmem::pwb(&dpfc_store_result(r, x, rec->epoch));
        }
    }
    pmem::pfence();  // PP: elements, voided orphans and copy-outs are durable before the record below
    dpfc_commit(r, cur, st.epoch + 2, st.head(), st.size(), nullptr, 0, nullptr, 0, 0);
}

// What recover(tid) reports: thread `tid`'s latest operation on the media (see above),
// `cur` the committed record's index.
inline combining::dfc_recovered_op dpfc_recovered(const void* region, unsigned tid, std::uint64_t cur) noexcept {
    const auto* h = static_cast<const dpfc_header*>(region);
    const auto r = dpfc_region::at(const_cast<void*>(region), h->threads);
    const auto& st = r.state[cur];
    const auto& e = r.results[tid];
    combining::dfc_recovered_op out;
    out.seq = e.seq;
    out.name = e.name;
    out.param = e.param;
    out.took_effect = dpfc_region::took_effect(st, e);
    if (out.took_effect) out.response = e.response;
    for (const dpfc_state* rec : {&st, r.older(cur)}) {
        if (rec == nullptr) continue;
        for (std::uint64_t k = 0; k < rec->inlined(); ++k) {
            const auto x = dpfc_inline::at(*rec, k);
            if (x.tid != tid || x.seq <= out.seq) continue;
            out = {x.seq, true, x.name, x.param, x.response};
        }
    }
    return out;
}
inline combining::dfc_recovered_op dpfc_recovered(const void* region, unsigned tid) noexcept {
    const auto* h = static_cast<const dpfc_header*>(region);
    return dpfc_recovered(region, tid, dpfc_region::at(const_cast<void*>(region), h->threads).committed_index());
}

}  // namespace ferrite::containers
