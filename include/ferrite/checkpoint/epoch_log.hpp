// ferrite/checkpoint/epoch_log.hpp: the persistent half of CpNvm: per-thread redo logs, the
// epoch commit record, replay into the persistent image, and recovery.
//
// Paper: [NVM] ch. 4 (docs/references.md): a checkpoint appends the contents of the regions
// each thread marked to that thread's persistent redo log; background threads replay
// finished epochs into the persistent image, one epoch at a time, idempotently; recovery
// finishes the replay. [NVM] leaves the commit record, the record format and log-full
// behaviour open (defect #4): docs/checkpointing.md fixes them, this file implements them.
//
// One region (64-byte aligned, in a pool) holds, in this order:
//   line 0   identity: magic, version, threads, log_bytes, image_bytes, FNV-1a 64 checksum
//   line 1   committed_epoch (u64): every record of epochs <= it is durable
//   line 2   applied_epoch (u64): the image holds every epoch <= it
//   logs     `threads` logs of log_bytes each
//   image    image_bytes: the persistent image
// Records are whole lines of the image, gathered in blocks (format version 3): a block is a
// header line {u64 epoch, u32 count (1..6), u32 checksum, six u64 descriptors (first image
// line << 24 | lines - 1)} followed by its records' lines in order; the checksum covers the
// epoch, the count, the descriptors and the lines (four interleaved lanes). Every log line is
// written with NT stores (pmem::nt_copy_lines: no read for ownership, nothing left in the
// cache), the records' lines as append() copies them, a block's header line when the block
// is full or at seal(). seal() also writes an end marker line (a zero epoch word) after the
// last block, so a scan stops there whatever the bytes after it held (a log is reused from
// its start after every replay), even when the thread appended nothing. Versions 1 and 2
// (a 24-byte header before each record, payloads padded to 8 bytes, one or four checksum
// lanes) are refused, naming their format (a damaged_pool; nothing written).
//
// Crash consistency (the argument; the crash target `cpnvm-counter` checks it):
//   append:  the record's lines stored with NT stores (not yet ordered).
//   seal(t): the open block's header line and the end marker line (NT stores), then
//            pfence: every NT store of the thread is durable, so its records are (PP of its
//            share). No write-back: NT stores need only the fence.
//   commit(E): after every thread of E sealed (the caller's barrier): committed := E, pwb,
//            pfence (LP/PP of the epoch). So every record of a committed epoch is durable.
//   replay:  for each committed, unapplied epoch in order, copy its records into the image
//            (apply: whole lines with NT stores, any other range with a pwb per line);
//            finish_replay: pfence (the NT stores and pwbs are durable); applied :=
//            committed, pwb, pfence.
//            Copying an epoch again (a crash during replay) writes the same bytes:
//            idempotent. The checkpointer's background replayer calls replay() after each
//            commit (one epoch: one walk of each log). In line, the checkpointer, which
//            commits one epoch at a time and holds its
//            bytes in the volatile image until every thread goes on, replays without reading
//            the logs: apply() of each record's range from the volatile image (the same
//            bytes as the records: nobody writes the image between the snapshot and the
//            end of the checkpoint), then finish_replay(). The image gets the same bytes
//            either way, so the argument is the same.
//   A scan of a log trusts a block only if applied < epoch <= committed (and then checks
//   count, descriptors and checksum): the epoch word is one aligned 8-byte store, so a torn or
//   unfinished block reads as an epoch > committed (new) or <= applied (stale), and ends
//   the scan like the end marker does. A reused log's stale records all have epochs <=
//   applied: a log is reused only after applied covered them, durably.
//   Recovery: validate every in-range record first (a bad one throws damaged_pool, nothing
//   written), then replay. The image is then the state at the end of committed_epoch.
//
// Log-full: append() returns false and appends nothing; the caller (checkpointer) replays
// and retries, and a region larger than the whole log is an error it reports. (The chained
// log chunks of docs/checkpointing.md are not built yet.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ferrite/pmem/flow.hpp"

namespace ferrite::checkpoint {

struct log_geometry {
    std::uint32_t threads = 1;          // thread logs, 1..256
    std::uint64_t log_bytes = 1 << 16;  // per thread, a multiple of 64, >= 128
    std::uint64_t image_bytes = 0;      // a multiple of 64, > 0
};

// Bytes a region with this geometry occupies (usage_error for a geometry out of range).
std::uint64_t region_bytes(const log_geometry& g);

struct replay_stats {
    std::uint64_t epochs = 0;   // epochs with records applied
    std::uint64_t records = 0;  // records copied
    std::uint64_t bytes = 0;    // payload bytes copied
};

class epoch_log {
public:
    // Records in one block: one descriptor word each in the block's header line.
    static constexpr unsigned block_records = 6;

    // Writes a fresh region (identity, epochs 0, empty logs, a zeroed image), durable on
    // return. `bytes` must be at least region_bytes(g); region 64-byte aligned.
    static epoch_log create(std::byte* region, std::uint64_t bytes, const log_geometry& g);
    // Validates the identity and geometry against `bytes` (damaged_pool, nothing written).
    // Does not replay: call recover().
    static epoch_log open(std::byte* region, std::uint64_t bytes);

    const log_geometry& geometry() const noexcept { return geometry_; }
    std::uint64_t committed_epoch() const noexcept;
    std::uint64_t applied_epoch() const noexcept;
    std::byte* image() const noexcept { return image_; }

    // Thread t's record of epoch `epoch` (> committed) for image bytes [offset, offset +
    // length), whole lines (offset and length multiples of 64, at most 2^24 lines: else
    // usage_error): false, with nothing appended, when t's log lacks room.
    bool append(unsigned t, std::uint64_t epoch, std::uint64_t offset, const void* bytes, std::uint32_t length);
    // Makes thread t's appended records durable: the open block's header and the end marker
    // (NT stores), one pfence. Called by thread t.
    void seal(unsigned t) noexcept;
    // committed := epoch, durable. Every thread's records of `epoch` must be sealed.
    void commit(std::uint64_t epoch);
    // Applies the committed, unapplied epochs to the image; empties the logs. Single caller,
    // no append concurrently. = apply() of every record in epoch order, then finish_replay().
    replay_stats replay();
    // The two steps of replay() for a caller that holds the committed, unapplied epoch's
    // bytes itself (one epoch only: the checkpointer right after commit): apply() copies
    // image bytes [offset, offset + length) from `bytes` into the persistent image (NT stores
    // when the range is whole lines, else stores and a pwb of each line; they must be the
    // bytes the epoch's records hold for that range), and
    // finish_replay(), once every record's range was applied, makes them durable and names
    // the epoch applied (pfence, applied := committed, pwb, pfence), and empties the logs.
    void apply(std::uint64_t offset, const void* bytes, std::uint64_t length) noexcept;
    void finish_replay();
    // Checks every committed, unapplied record (offset, length, checksum): damaged_pool on
    // the first bad one. Writes nothing.
    void validate_records() const;
    // After a restart: validate_records(), then replay.
    replay_stats recover();

    std::uint64_t log_used(unsigned t) const noexcept { return used_[t]; }
    std::uint64_t log_capacity() const noexcept { return geometry_.log_bytes; }
    // Bytes a record of `length` payload bytes takes at most: a block's header line, its
    // lines, the end marker line.
    static std::uint64_t record_bytes(std::uint32_t length) noexcept;

private:
    epoch_log(std::byte* region, const log_geometry& g);
    std::byte* log_of(unsigned t) const noexcept;
    // fn(epoch, image offset, length, bytes) for thread t's records in (applied, committed],
    // each checked first when `validate` (damaged_pool on a bad one).
    template <class Fn>
    void for_each_record(unsigned t, bool validate, Fn&& fn) const;
    replay_stats replay_one();  // replay()'s apply step when one epoch is unapplied

    std::byte* region_;
    log_geometry geometry_;
    std::uint32_t version_;  // of the format (epoch_log.cpp: this build reads and writes 3 only)
    std::byte* image_;
    std::vector<std::uint64_t> used_ FERRITE_FLOW_SKIP;    // per thread: bytes of its log written since the last replay
    std::vector<std::uint64_t> sealed_ FERRITE_FLOW_SKIP;  // per thread: bytes of its log written back by seal()
    // Per thread: the block being filled (count 0: none), its header written when it is full
    // or at seal().
    struct open_block {
        std::uint64_t header_at = 0;  // its header line's offset in the log
        std::uint64_t epoch = 0;
        std::uint32_t count = 0;
        std::uint64_t records[block_records] = {};
        std::uint64_t lanes[4] = {};  // the checksum's states over the records' lines so far
    };
    std::vector<open_block> open_ FERRITE_FLOW_SKIP;
    void close_block(unsigned t) noexcept;
};

}  // namespace ferrite::checkpoint
