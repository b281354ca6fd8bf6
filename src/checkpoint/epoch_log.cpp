// The persistent half of CpNvm (see ferrite/checkpoint/epoch_log.hpp).
#include "ferrite/checkpoint/epoch_log.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::checkpoint {
namespace {

constexpr std::uint64_t line = 64;
constexpr std::uint64_t magic = 0x31474f4c50434546ull;  // "FECPLOG1"
// Version 3 (this build's logs): line-aligned blocks of records, written with NT stores
// (epoch_log.hpp). Versions 1 and 2 (a 24-byte header before each record, payloads padded to
// 8 bytes; one-lane and four-lane checksums) are refused with a damaged_pool naming them:
// nothing is written, and the build that wrote such a pool still recovers it.
constexpr std::uint32_t version = 3;
constexpr std::uint32_t max_threads = 256;
constexpr std::uint64_t header_lines = 3;  // identity, committed, applied

struct identity {
    std::uint64_t magic;
    std::uint32_t version;
    std::uint32_t threads;
    std::uint64_t log_bytes;
    std::uint64_t image_bytes;
    std::uint64_t checksum;  // FNV-1a 64 of the fields above
};
static_assert(sizeof(identity) <= line);

// A block's header line: the epoch, how many records, the checksum, and one descriptor per
// record, (first image line << 24) | (lines - 1); the records' lines follow, in order.
struct block_header {
    std::uint64_t epoch;
    std::uint32_t count;
    std::uint32_t checksum;
    std::uint64_t records[epoch_log::block_records];
};
static_assert(sizeof(block_header) == line);
constexpr unsigned length_bits = 24;
constexpr std::uint64_t max_record_lines = std::uint64_t{1} << length_bits;
// A descriptor holds the first line in the bits above length_bits: the image may hold at
// most 2^(64 - length_bits) lines (2^46 bytes; check_geometry).
constexpr std::uint64_t max_image_lines = std::uint64_t{1} << (64 - length_bits);

std::uint64_t identity_checksum(const identity& id) noexcept { return pmem::fnv1a64(&id, offsetof(identity, checksum)); }

// The block's checksum: four 64-bit states, each xoring in a word then multiplying and
// folding (mix); the payload's words go to the states in turn (word i into state i % 4, so
// the multiplies of four words overlap: a one-state chain was 4.6% of a ferrite-kv server's
// CPU under 4 KiB sets), which append() runs over each record's lines as it copies them;
// then the header's epoch, count and descriptors and the four states fold into 32 bits.
std::uint64_t mix(std::uint64_t h, std::uint64_t w) noexcept {
    h ^= w;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

std::uint64_t full_word(const std::byte* at) noexcept {
    std::uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
}

void start_lanes(std::uint64_t (&lanes)[4]) noexcept {
    for (std::uint64_t k = 0; k < 4; ++k) lanes[k] = 0x9e3779b97f4a7c15ull ^ k;
}

// `bytes` a multiple of 32 (records are whole lines).
void mix_payload(std::uint64_t (&lanes)[4], const std::byte* payload, std::uint64_t bytes) noexcept {
    for (std::uint64_t i = 0; i < bytes; i += 32)
        for (std::size_t k = 0; k < 4; ++k) lanes[k] = mix(lanes[k], full_word(payload + i + 8 * k));
}

std::uint32_t block_checksum(const block_header& h, const std::uint64_t (&lanes)[4]) noexcept {
    std::uint64_t x = mix(mix(0x9e3779b97f4a7c15ull, h.epoch), h.count);
    for (std::uint32_t r = 0; r < h.count && r < epoch_log::block_records; ++r) x = mix(x, h.records[r]);
    for (const auto l : lanes) x = mix(x, l);
    return static_cast<std::uint32_t>(x ^ (x >> 32));
}

// Every byte the log's records reach the media by: whole lines, NT stores (no read for
// ownership, nothing left in the cache), durable at seal()'s pfence. One call site, so that
// flush mutation testing switches the log's writes off together, as it did the seal's
// write-back of them before version 3.
void write_log_lines(std::byte* to, const void* from, std::uint64_t bytes) noexcept {
    pmem::nt_copy_lines(to, from, bytes);
}

constexpr std::uint64_t round_up(std::uint64_t n, std::uint64_t to) noexcept { return (n + to - 1) / to * to; }

std::uint64_t* word_at(std::byte* region, std::uint64_t line_index) noexcept {
    return reinterpret_cast<std::uint64_t*>(region + line_index * line);
}

[[noreturn]] void damaged(const std::string& what) {
    throw_damaged(pool_errc::damaged_object, "checkpoint log", "", what);
}

void check_geometry(const log_geometry& g) {
    if (g.threads == 0 || g.threads > max_threads)
        throw usage_error("checkpoint log: threads must be 1.." + std::to_string(max_threads) + ", not " +
                          std::to_string(g.threads));
    if (g.log_bytes < 2 * line || g.log_bytes % line != 0 || g.log_bytes > (std::uint64_t{1} << 40))
        throw usage_error("checkpoint log: log_bytes must be a multiple of 64 between 128 and 2^40, not " +
                          std::to_string(g.log_bytes));
    if (g.image_bytes == 0 || g.image_bytes % line != 0 || g.image_bytes / line > max_image_lines)
        throw usage_error("checkpoint log: image_bytes must be a positive multiple of 64 up to 2^46, not " +
                          std::to_string(g.image_bytes));
}

}  // namespace

std::uint64_t region_bytes(const log_geometry& g) {
    check_geometry(g);
    return header_lines * line + g.threads * g.log_bytes + g.image_bytes;
}

std::uint64_t epoch_log::record_bytes(std::uint32_t length) noexcept {
    return line + round_up(length, line) + line;  // a block's header line, the lines, the end marker
}

epoch_log::epoch_log(std::byte* region, const log_geometry& g)
    : region_(region), geometry_(g), version_(version),
      image_(region + header_lines * line + g.threads * g.log_bytes), used_(g.threads, 0), sealed_(g.threads, 0),
      open_(g.threads) {}

std::byte* epoch_log::log_of(unsigned t) const noexcept { return region_ + header_lines * line + t * geometry_.log_bytes; }

FERRITE_FLOW_ROOT epoch_log epoch_log::create(std::byte* region, std::uint64_t bytes, const log_geometry& g) {
    const auto need = region_bytes(g);
    if (bytes < need)
        throw usage_error("checkpoint log: the region has " + std::to_string(bytes) + " bytes, the geometry needs " +
                          std::to_string(need));
    if (reinterpret_cast<std::uintptr_t>(region) % line != 0)
        throw usage_error("checkpoint log: the region must be 64-byte aligned");
    epoch_log log(region, g);
    // Not yet named by anything: the order of these writes does not matter, one pfence at
    // the end makes them durable before the caller publishes the region.
    std::memset(log.image_, 0, g.image_bytes);
    pmem::pwb_range(log.image_, g.image_bytes);
    for (unsigned t = 0; t < g.threads; ++t) {
        *reinterpret_cast<std::uint64_t*>(log.log_of(t)) = 0;  // end marker: an empty log
        pmem::pwb(log.log_of(t));
    }
    *word_at(region, 1) = 0;
    *word_at(region, 2) = 0;
    pmem::pwb(word_at(region, 1));
    pmem::pwb(word_at(region, 2));
    identity id{magic, log.version_, g.threads, g.log_bytes, g.image_bytes, 0};
    id.checksum = identity_checksum(id);
    std::memcpy(region, &id, sizeof id);
    pmem::pwb(region);
    pmem::pfence();  // PP of create: all of the above durable before the caller names the region
    return log;
}

epoch_log epoch_log::open(std::byte* region, std::uint64_t bytes) {
    if (bytes < header_lines * line) damaged("the region (" + std::to_string(bytes) + " bytes) is smaller than its header");
    identity id;
    std::memcpy(&id, region, sizeof id);
    if (id.magic != magic) damaged("the region does not start with a checkpoint log's magic number");
    if (id.version == 1 || id.version == 2)
        damaged("format version " + std::to_string(id.version) +
                " (records with 24-byte headers, not line-aligned: written by an older ferrite), this build reads "
                "version " + std::to_string(version) + " only; recover the pool with the build that wrote it, which "
                "applies the committed epoch, then open it here");
    if (id.version != version)
        damaged("format version " + std::to_string(id.version) + ", this build reads version " + std::to_string(version));
    if (id.checksum != identity_checksum(id)) damaged("the identity line's checksum does not match");
    const log_geometry g{id.threads, id.log_bytes, id.image_bytes};
    try {
        if (region_bytes(g) > bytes)
            damaged("the geometry needs " + std::to_string(region_bytes(g)) + " bytes, the region has " +
                    std::to_string(bytes));
    } catch (const usage_error& e) {
        damaged(std::string("impossible geometry: ") + e.what());
    }
    epoch_log log(region, g);
    log.version_ = id.version;
    // Epochs count up from 0, one per checkpoint: no log gets near 2^63 (292 years at one a
    // nanosecond). A committed epoch up there is damage, and taken as it is, the next epoch
    // (committed + 1) would wrap past 2^64 to an epoch that is not after it.
    if (log.committed_epoch() >= (std::uint64_t{1} << 63))
        damaged("committed epoch " + std::to_string(log.committed_epoch()) + " is beyond any count of checkpoints");
    if (log.applied_epoch() > log.committed_epoch())
        damaged("applied epoch " + std::to_string(log.applied_epoch()) + " is past the committed epoch " +
                std::to_string(log.committed_epoch()));
    return log;
}

std::uint64_t epoch_log::committed_epoch() const noexcept { return *word_at(region_, 1); }
std::uint64_t epoch_log::applied_epoch() const noexcept { return *word_at(region_, 2); }

bool epoch_log::append(unsigned t, std::uint64_t epoch, std::uint64_t offset, const void* bytes, std::uint32_t length) {
    if (t >= geometry_.threads) throw usage_error("checkpoint log: thread " + std::to_string(t) + " has no log");
    if (length == 0 || offset > geometry_.image_bytes || length > geometry_.image_bytes - offset)
        throw usage_error("checkpoint log: record [" + std::to_string(offset) + ", +" + std::to_string(length) +
                          ") is empty or outside the " + std::to_string(geometry_.image_bytes) + "-byte image");
    if (offset % line != 0 || length % line != 0 || length / line > max_record_lines)
        throw usage_error("checkpoint log: record [" + std::to_string(offset) + ", +" + std::to_string(length) +
                          ") is not whole lines of the image, at most 2^24 of them");
    auto& b = open_[t];
    if (b.count > 0 && b.epoch != epoch) close_block(t);
    // Room for a new block's header line if none is open, the record, and the end marker.
    const std::uint64_t need = (b.count == 0 ? line : 0) + length + line;
    if (used_[t] + need > geometry_.log_bytes) return false;
    std::byte* log = log_of(t);
    if (b.count == 0) {
        b.header_at = used_[t];
        b.epoch = epoch;
        start_lanes(b.lanes);
        used_[t] += line;
    }
    const auto* payload = static_cast<const std::byte*>(bytes);
    write_log_lines(log + used_[t], payload, length);
    mix_payload(b.lanes, payload, length);  // (the lines just read: cached)
    b.records[b.count++] = (offset / line) << length_bits | (length / line - 1);
    used_[t] += length;
    if (b.count == block_records) close_block(t);
    return true;
}

// The block's header line, once its records are written (NT stores, like them).
void epoch_log::close_block(unsigned t) noexcept {
    auto& b = open_[t];
    if (b.count == 0) return;
    alignas(64) block_header h{};
    h.epoch = b.epoch;
    h.count = b.count;
    for (unsigned r = 0; r < b.count; ++r) h.records[r] = b.records[r];
    h.checksum = block_checksum(h, b.lanes);
    write_log_lines(log_of(t) + b.header_at, &h, line);
    b.count = 0;
}

FERRITE_FLOW_ROOT void epoch_log::seal(unsigned t) noexcept {
    // The open block's header, then an end marker line (a zero epoch word) after the last
    // record: a scan stops there whatever the bytes after it hold (an interrupted epoch's
    // records of the same number, say). Everything written with NT stores since the last
    // seal: the pfence makes it durable.
    close_block(t);
    if (used_[t] > sealed_[t] || used_[t] == 0) {
        alignas(64) static constexpr std::byte end_marker[line]{};
        write_log_lines(log_of(t) + used_[t], end_marker, line);
        sealed_[t] = used_[t];
    }
    pmem::pfence();  // PP: this thread's records of the epoch are durable before it may commit
}

FERRITE_FLOW_ROOT void epoch_log::commit(std::uint64_t epoch) {
    if (epoch <= committed_epoch())
        throw usage_error("checkpoint log: epoch " + std::to_string(epoch) + " is not after the committed epoch " +
                          std::to_string(committed_epoch()));
    *word_at(region_, 1) = epoch;  // LP of the epoch
    pmem::pwb(word_at(region_, 1));
    pmem::pfence();  // PP: the epoch is committed when commit returns
}

// The one walk of a log: records in (applied, committed] from the start, to the first record
// outside that range (end marker, stale or uncommitted). With `validate`, each record's
// length, image range and checksum are checked before fn sees it (damaged_pool on the
// first bad one): recovery validates every log before it writes; replay after that, or of
// records this process wrote, trusts them.
template <class Fn>
void epoch_log::for_each_record(unsigned t, bool validate, Fn&& fn) const {
    const std::byte* log = log_of(t);
    const auto applied = applied_epoch(), committed = committed_epoch();
    std::uint64_t at = 0;
    while (at + line <= geometry_.log_bytes) {
        block_header h;
        std::memcpy(&h, log + at, sizeof h);
        if (h.epoch <= applied || h.epoch > committed) break;
        const std::byte* payload = log + at + line;
        std::uint64_t payload_bytes = 0;
        if (validate) {
            const std::string where = "thread " + std::to_string(t) + "'s log, block at byte " + std::to_string(at) +
                                      " (epoch " + std::to_string(h.epoch) + ")";
            if (h.count == 0 || h.count > block_records)
                damaged(where + ": " + std::to_string(h.count) + " records, a block holds 1 to " +
                        std::to_string(block_records));
            const std::uint64_t image_lines = geometry_.image_bytes / line, room = (geometry_.log_bytes - at - line) / line;
            std::uint64_t lines = 0;
            for (std::uint32_t r = 0; r < h.count; ++r) {
                const std::uint64_t first = h.records[r] >> length_bits, n = (h.records[r] & (max_record_lines - 1)) + 1;
                if (first > image_lines || n > image_lines - first)
                    damaged(where + ", record " + std::to_string(r) + ": lines [" + std::to_string(first) + ", +" +
                            std::to_string(n) + ") lie outside the " + std::to_string(image_lines) + "-line image");
                lines += n;  // <= 6 * 2^24: no overflow
            }
            if (lines > room)
                damaged(where + ": " + std::to_string(lines) + " lines of records do not fit in the log");
            std::uint64_t lanes[4];
            start_lanes(lanes);
            mix_payload(lanes, payload, lines * line);
            if (h.checksum != block_checksum(h, lanes)) damaged(where + ": checksum does not match its contents");
        }
        for (std::uint32_t r = 0; r < h.count && r < block_records; ++r) {
            const std::uint64_t first = h.records[r] >> length_bits, n = (h.records[r] & (max_record_lines - 1)) + 1;
            fn(h.epoch, first * line, static_cast<std::uint32_t>(n * line), payload + payload_bytes);
            payload_bytes += n * line;
        }
        at += line + payload_bytes;
    }
}

FERRITE_FLOW_ROOT replay_stats epoch_log::replay() {
    replay_stats stats;
    if (committed_epoch() - applied_epoch() == 1) { stats = replay_one(); } else if (applied_epoch() < committed_epoch()) {
        // The epochs the logs hold records of, in order (an epoch in which nobody marked
        // anything has none, and needs nothing applied). A log's records are in epoch order,
        // so each log adds an epoch only where it changes.
        std::vector<std::uint64_t> epochs;
        for (unsigned t = 0; t < geometry_.threads; ++t)
            for_each_record(t, false, [&](std::uint64_t e, std::uint64_t, std::uint32_t, const std::byte*) {
                if (epochs.empty() || epochs.back() != e) epochs.push_back(e);
            });
        std::sort(epochs.begin(), epochs.end());
        epochs.erase(std::unique(epochs.begin(), epochs.end()), epochs.end());
        for (const auto e : epochs)
            for (unsigned t = 0; t < geometry_.threads; ++t)
                for_each_record(t, false, [&](std::uint64_t re, std::uint64_t offset, std::uint32_t length, const std::byte* bytes) {
                    if (re != e) return;
                    apply(offset, bytes, length);
                    ++stats.records;
                    stats.bytes += length;
                });
        stats.epochs = epochs.size();
    }
    finish_replay();
    return stats;
}

void epoch_log::apply(std::uint64_t offset, const void* bytes, std::uint64_t length) noexcept {
    if (offset % line == 0 && length % line == 0) {
        // Whole lines (every record of the checkpointer's): NT stores, which neither read the
        // image's lines first nor leave them in the cache; durable at finish_replay's pfence
        // like a pwb's line.
        pmem::nt_copy_lines(image_ + offset, bytes, length);
        return;
    }
    std::memcpy(image_ + offset, bytes, length);
    pmem::pwb_range(image_ + offset, length);
}

FERRITE_FLOW_ROOT void epoch_log::finish_replay() {
    if (applied_epoch() < committed_epoch()) {
        pmem::pfence();  // PP: the image holds the epochs before `applied` names them
        FERRITE_FLOW_SENTINEL_AT(word_at(region_, 2)); *word_at(region_, 2) = committed_epoch();
        pmem::pwb(word_at(region_, 2));
        pmem::pfence();  // PP: durable before a log is reused (its records become stale)
    }
    for (auto& u : used_) u = 0;
    for (auto& u : sealed_) u = 0;
    for (auto& b : open_) b.count = 0;
}

void epoch_log::validate_records() const {
    for (unsigned t = 0; t < geometry_.threads; ++t)
        for_each_record(t, true, [](std::uint64_t, std::uint64_t, std::uint32_t, const std::byte*) {});
}

replay_stats epoch_log::recover() {
    validate_records();  // before anything is written
    return replay();
}

// One epoch to apply (the checkpointer's background replayer after each commit, or a crash
// in a checkpoint): every in-range record is of that epoch, one walk of each log. (Defined
// here, after the rest, so the persistence sites above keep their lines: docs/flow.md.)
replay_stats epoch_log::replay_one() {
    replay_stats stats;
    for (unsigned t = 0; t < geometry_.threads; ++t)
        for_each_record(t, false, [&](std::uint64_t, std::uint64_t offset, std::uint32_t length, const std::byte* bytes) {
            apply(offset, bytes, length);
            ++stats.records;
            stats.bytes += length;
        });
    stats.epochs = stats.records > 0 ? 1 : 0;
    return stats;
}

}  // namespace ferrite::checkpoint
