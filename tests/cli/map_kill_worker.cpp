// map_kill_worker: the program tests/cli/map_kill_test.sh kills with SIGKILL (issue 18: a
// killed multi-threaded map program loses no acknowledged insert, erase or upsert).
//
//   map_kill_worker run POOL_PATH JOURNAL_DIR --threads T --ops N --seed S
//       opens (or creates) the store and its SOFT map "map" (durable_map<u64, u64>); thread t
//       runs N random operations on its own keys [t*64, t*64+64): insert, erase or
//       insert_or_assign, each value unique (thread and sequence number). Before an
//       operation the thread appends an intent record to JOURNAL_DIR/thread-t, after it an
//       ack record with the returned bool. Prints "run: done" when every thread finished.
//   map_kill_worker check POOL_PATH JOURNAL_DIR
//       opens the store (its recovery), replays every journal against a model of the map
//       (each acknowledged result must be the model's), then requires the map to hold
//       exactly the model's keys and values, read both with get() and with for_each(). The
//       one exception per thread is the key of its last intent without an ack (the kill
//       landed between the two): the map may show that operation done or not done. The
//       check appends a resolution record saying which, so the next cycle's model is exact.
//       Exit 0 with a summary line ("check: ... acks A ..."), 1 with a message naming the
//       key, the value expected and the value found.
//
// The journal is the program's witness of what was acknowledged, kept outside the pool:
// records are appended with write(2), which a SIGKILL does not undo (the page cache belongs
// to the kernel, not the process; power loss is not what this tests). A record is 32
// bytes, so records never straddle a page and a kill cannot tear one; the check still
// drops a short or garbled last record (an operation starts only after its intent's
// write returned, so a torn intent was never run). Every other record is validated
// (checksum, kind, sequence, thread, key range) before it is used.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "ferrite/containers/durable_map.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/error.hpp"

namespace {

using map_type = ferrite::durable_map<std::uint64_t, std::uint64_t>;  // SOFT (use_soft)

constexpr std::uint64_t keys_per_thread = 64;
constexpr unsigned max_threads = 16;
constexpr std::string_view layout = "map-kill";
constexpr std::string_view map_name = "map";

enum class kind : std::uint8_t { intent = 1, ack = 2, resolution = 3 };
enum class op : std::uint8_t { insert = 1, erase = 2, upsert = 3 };

struct record {
    std::uint8_t kind;    // kind
    std::uint8_t op;      // op (of the intent this record belongs to)
    std::uint8_t result;  // ack: the returned bool; resolution: 1 done, 0 not done
    std::uint8_t thread;
    std::uint32_t check;  // checksum of the other 28 bytes
    std::uint64_t seq;    // the thread's operation number, 1, 2, ... over all runs
    std::uint64_t key;
    std::uint64_t value;  // insert, upsert: (thread + 1) << 48 | seq; erase: 0
};
static_assert(sizeof(record) == 32 && 4096 % sizeof(record) == 0, "a record must never straddle a page");

std::uint32_t checksum(const record& r) {
    std::uint64_t h = 0xcbf29ce484222325u;  // FNV-1a over every byte but the checksum's
    const auto* b = reinterpret_cast<const unsigned char*>(&r);
    for (std::size_t i = 0; i < sizeof r; ++i)
        if (i < offsetof(record, check) || i >= offsetof(record, check) + sizeof r.check)
            h = (h ^ b[i]) * 0x100000001b3u;
    return static_cast<std::uint32_t>(h ^ (h >> 32));
}

record make_record(kind k, op o, bool result, unsigned thread, std::uint64_t seq, std::uint64_t key,
                   std::uint64_t value) {
    record r{static_cast<std::uint8_t>(k), static_cast<std::uint8_t>(o), static_cast<std::uint8_t>(result),
             static_cast<std::uint8_t>(thread), 0, seq, key, value};
    r.check = checksum(r);
    return r;
}

const char* op_name(std::uint8_t o) {
    switch (static_cast<op>(o)) {
        case op::insert: return "insert";
        case op::erase: return "erase";
        case op::upsert: return "insert_or_assign";
    }
    return "?";
}

std::string show(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "absent"; }

[[noreturn]] void system_failure(const std::string& what) {
    throw std::system_error(errno, std::generic_category(), what);
}

std::filesystem::path journal_path(const std::filesystem::path& dir, unsigned t) {
    return dir / ("thread-" + std::to_string(t));
}

void append(int fd, const record& r, const std::filesystem::path& path) {
    const auto* p = reinterpret_cast<const char*>(&r);
    std::size_t done = 0;
    while (done < sizeof r) {
        const ssize_t n = ::write(fd, p + done, sizeof r - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) system_failure("write " + path.string());
        done += static_cast<std::size_t>(n);
    }
}

// ---- run ------------------------------------------------------------------------------------

// The journal a run appends to: it must end with a settled operation (an ack or a
// resolution): an intent left by a killed run is the check's to resolve.
struct journal_writer {
    int fd = -1;
    std::uint64_t next_seq = 1;
};

journal_writer open_for_run(const std::filesystem::path& path, unsigned t) {
    journal_writer j;
    j.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (j.fd < 0) system_failure("open " + path.string());
    struct stat st {};
    if (::fstat(j.fd, &st) != 0) system_failure("stat " + path.string());
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0) return j;
    record last{};
    if (size % sizeof(record) != 0 ||
        ::pread(j.fd, &last, sizeof last, static_cast<off_t>(size - sizeof last)) != sizeof last ||
        last.check != checksum(last) || last.thread != t || last.kind == static_cast<std::uint8_t>(kind::intent))
        throw std::runtime_error(path.string() + " does not end with a settled operation: run `check` first");
    j.next_seq = last.seq + 1;
    return j;
}

void run_thread(map_type& map, journal_writer j, const std::filesystem::path& path, unsigned t,
                std::uint64_t ops, std::uint64_t seed) {
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15u + t);
    for (std::uint64_t i = 0; i < ops; ++i, ++j.next_seq) {
        const std::uint64_t key = t * keys_per_thread + rng() % keys_per_thread;
        const auto pick = rng() % 10;
        const op o = pick < 4 ? op::insert : pick < 7 ? op::erase : op::upsert;
        const std::uint64_t value = o == op::erase ? 0 : (std::uint64_t{t} + 1) << 48 | j.next_seq;
        append(j.fd, make_record(kind::intent, o, false, t, j.next_seq, key, value), path);
        bool result = false;
        switch (o) {
            case op::insert: result = map.insert(key, value); break;
            case op::erase: result = map.erase(key); break;
            case op::upsert: result = map.insert_or_assign(key, value); break;
        }
        append(j.fd, make_record(kind::ack, o, result, t, j.next_seq, key, value), path);
    }
    ::close(j.fd);
}

ferrite::store open_store(const std::filesystem::path& pool) {
    return ferrite::store::open_or_create(pool, layout, {.size = std::uint64_t{16} << 20});
}

int run(const std::filesystem::path& pool, const std::filesystem::path& dir, unsigned threads, std::uint64_t ops,
        std::uint64_t seed) {
    std::filesystem::create_directories(dir);
    std::vector<journal_writer> journals;
    for (unsigned t = 0; t < threads; ++t) journals.push_back(open_for_run(journal_path(dir, t), t));
    auto store = open_store(pool);
    auto map = store.names().open_map<std::uint64_t, std::uint64_t>(map_name);
    std::vector<std::thread> workers;
    std::vector<std::string> failures(threads);
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            try {
                run_thread(*map, journals[t], journal_path(dir, t), t, ops, seed);
            } catch (const std::exception& e) {
                failures[t] = e.what();
            }
        });
    for (auto& w : workers) w.join();
    for (unsigned t = 0; t < threads; ++t)
        if (!failures[t].empty()) throw std::runtime_error("thread " + std::to_string(t) + ": " + failures[t]);
    std::printf("run: done (%u threads, %llu ops each)\n", threads, static_cast<unsigned long long>(ops));
    return 0;
}

// ---- check ----------------------------------------------------------------------------------

struct thread_model {
    unsigned thread = 0;
    std::filesystem::path path;
    std::array<std::optional<std::uint64_t>, keys_per_thread> values{};  // by key - thread * 64
    std::optional<record> pending;  // the last intent, unacknowledged and unresolved
    std::uint64_t acks = 0;
};

// The operation's effect on the model; returns what the map returns for it.
bool apply_op(std::optional<std::uint64_t>& slot, const record& r) {
    const bool present = slot.has_value();
    switch (static_cast<op>(r.op)) {
        case op::insert:
            if (!present) slot = r.value;
            return !present;
        case op::erase: slot.reset(); return present;
        case op::upsert: slot = r.value; return !present;
    }
    return false;
}

// Reads and replays one journal. A short or garbled last record (a kill inside write(2)) is
// cut off; anything else wrong is an error naming the record.
thread_model replay(const std::filesystem::path& path, unsigned t) {
    thread_model m;
    m.thread = t;
    m.path = path;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) system_failure("open " + path.string());
    struct stat st {};
    if (::fstat(fd, &st) != 0) system_failure("stat " + path.string());
    std::vector<record> rs(static_cast<std::size_t>(st.st_size) / sizeof(record));
    const auto bytes = rs.size() * sizeof(record);
    if (bytes != 0 && ::pread(fd, rs.data(), bytes, 0) != static_cast<ssize_t>(bytes))
        system_failure("read " + path.string());
    std::size_t keep = rs.size();
    if (keep * sizeof(record) == static_cast<std::size_t>(st.st_size) && !rs.empty() &&
        rs.back().check != checksum(rs.back()))
        --keep;  // a whole record, garbled: the write was cut inside it
    if (keep * sizeof(record) != static_cast<std::size_t>(st.st_size)) {
        std::printf("check: %s: cut a torn last record (%lld bytes kept of %lld)\n", path.c_str(),
                    static_cast<long long>(keep * sizeof(record)), static_cast<long long>(st.st_size));
        if (::ftruncate(fd, static_cast<off_t>(keep * sizeof(record))) != 0)
            system_failure("truncate " + path.string());
    }
    ::close(fd);
    rs.resize(keep);
    std::uint64_t seq = 0;
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const record& r = rs[i];
        const auto where = [&] { return path.string() + " record " + std::to_string(i) + ": "; };
        if (r.check != checksum(r)) throw std::runtime_error(where() + "bad checksum");
        if (r.thread != t || r.kind < 1 || r.kind > 3 || r.op < 1 || r.op > 3 ||
            r.key / keys_per_thread != t)
            throw std::runtime_error(where() + "not a record of thread " + std::to_string(t));
        if (r.kind == static_cast<std::uint8_t>(kind::intent)) {
            if (m.pending || r.seq != seq + 1)
                throw std::runtime_error(where() + "intent " + std::to_string(r.seq) + " out of sequence");
            m.pending = r;
            seq = r.seq;
            continue;
        }
        if (!m.pending || r.seq != m.pending->seq || r.op != m.pending->op || r.key != m.pending->key ||
            r.value != m.pending->value)
            throw std::runtime_error(where() + "settles no pending intent");
        auto& slot = m.values[r.key - t * keys_per_thread];
        if (r.kind == static_cast<std::uint8_t>(kind::ack)) {
            const auto before = slot;
            const bool expected = apply_op(slot, r);
            if (expected != (r.result != 0))
                throw std::runtime_error("thread " + std::to_string(t) + " operation " + std::to_string(r.seq) + ": " +
                                         op_name(r.op) + " of key " + std::to_string(r.key) + " returned " +
                                         (r.result ? "true" : "false") + ", but the key was " + show(before) +
                                         " before it (expected " + (expected ? "true" : "false") + ")");
            ++m.acks;
        } else if (r.result != 0) {
            (void)apply_op(slot, r);  // resolved as done by an earlier check
        }
        m.pending.reset();
    }
    return m;
}

int check(const std::filesystem::path& pool, const std::filesystem::path& dir) {
    std::vector<thread_model> models;
    if (std::filesystem::exists(dir))
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            const auto name = e.path().filename().string();
            unsigned t = max_threads;
            if (name.rfind("thread-", 0) != 0 ||
                std::from_chars(name.data() + 7, name.data() + name.size(), t).ec != std::errc{} || t >= max_threads ||
                name != "thread-" + std::to_string(t))
                throw std::runtime_error("unexpected file in the journal directory: " + e.path().string());
            models.push_back(replay(e.path(), t));
        }
    std::uint64_t acks = 0;
    for (const auto& m : models) acks += m.acks;
    std::error_code ec;
    if (!std::filesystem::exists(pool, ec)) {
        // Killed before the pool was named: no operation can have started.
        for (const auto& m : models)
            if (m.pending || m.acks != 0)
                throw std::runtime_error("the pool " + pool.string() + " is gone, but thread " +
                                         std::to_string(m.thread) + " journaled operations");
        std::printf("check: no pool yet; acks 0; ok\n");
        return 0;
    }
    auto store = ferrite::store::open(pool, layout);  // recovers the heap, the catalog and the map
    auto map = store.names().open_map<std::uint64_t, std::uint64_t>(map_name);

    // What the map holds, read two ways: the index (get) and the list (for_each).
    std::map<std::uint64_t, std::uint64_t> listed;
    std::string problem;
    map->for_each([&](const std::uint64_t& k, const std::uint64_t& v) {
        if (!listed.emplace(k, v).second && problem.empty())
            problem = "key " + std::to_string(k) + ": listed twice by for_each";
    });
    if (!problem.empty()) throw std::runtime_error(problem);
    const auto mismatch = [](std::uint64_t key, const std::string& expected,
                                 const std::optional<std::uint64_t>& found, const char* how) {
        throw std::runtime_error("key " + std::to_string(key) + ": expected " + expected + ", found " + show(found) +
                                 " (" + how + ")");
    };
    std::vector<bool> known(max_threads * keys_per_thread, false);
    std::uint64_t done = 0, not_done = 0;
    std::vector<std::pair<thread_model*, bool>> resolutions;
    for (auto& m : models) {
        for (std::uint64_t i = 0; i < keys_per_thread; ++i) {
            const std::uint64_t key = m.thread * keys_per_thread + i;
            known[key] = true;
            const auto got = map->get(key);
            const auto it = listed.find(key);
            const auto in_list = it == listed.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
            auto expected = m.values[i];
            if (m.pending && m.pending->key == key) {
                auto if_done = expected;
                (void)apply_op(if_done, *m.pending);
                const auto what = show(expected) + " (not done) or " + show(if_done) +
                                  " (done) after the unacknowledged " + op_name(m.pending->op) + " of thread " +
                                  std::to_string(m.thread) + " operation " + std::to_string(m.pending->seq);
                if (got != expected && got != if_done) mismatch(key, what, got, "get");
                if (in_list != got) mismatch(key, show(got) + " as get() says", in_list, "for_each");
                const bool was_done = got == if_done;
                resolutions.emplace_back(&m, was_done);
                ++(was_done ? done : not_done);
                continue;
            }
            if (got != expected) mismatch(key, show(expected), got, "get");
            if (in_list != expected) mismatch(key, show(expected), in_list, "for_each");
        }
    }
    for (const auto& [k, v] : listed)
        if (k >= known.size() || !known[k]) mismatch(k, "absent (no thread owns it)", v, "for_each");

    // Everything matched: settle the unacknowledged operations for the next cycle's model.
    for (const auto& [m, was_done] : resolutions) {
        const int fd = ::open(m->path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0) system_failure("open " + m->path.string());
        const record& p = *m->pending;
        append(fd, make_record(kind::resolution, static_cast<op>(p.op), was_done, m->thread, p.seq, p.key, p.value),
               m->path);
        ::close(fd);
    }
    std::printf("check: %zu journals; acks %llu; unacknowledged %llu (done %llu, not done %llu); %zu keys%s; ok\n",
                models.size(), static_cast<unsigned long long>(acks), static_cast<unsigned long long>(done + not_done),
                static_cast<unsigned long long>(done), static_cast<unsigned long long>(not_done), listed.size(),
                store.recovered_from_crash() ? "; recovered from a crash" : "");
    return 0;
}

std::uint64_t number(std::string_view what, const char* s) {
    std::uint64_t v = 0;
    const std::string_view text(s);
    if (text.empty() || std::from_chars(text.data(), text.data() + text.size(), v).ec != std::errc{} ||
        std::to_string(v) != text)
        throw ferrite::usage_error(std::string(what) + " wants a number, got '" + s + "'");
    return v;
}

int usage() {
    std::fprintf(stderr,
                 "usage: map_kill_worker run POOL_PATH JOURNAL_DIR --threads T --ops N --seed S\n"
                 "       map_kill_worker check POOL_PATH JOURNAL_DIR\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc < 4) return usage();
    const std::string_view command = argv[1];
    const std::filesystem::path pool = argv[2], dir = argv[3];
    if (command == "check" && argc == 4) return check(pool, dir);
    if (command != "run" || argc != 10) return usage();
    std::uint64_t threads = 0, ops = 0, seed = 0;
    for (int i = 4; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        if (flag == "--threads") threads = number(flag, argv[i + 1]);
        else if (flag == "--ops") ops = number(flag, argv[i + 1]);
        else if (flag == "--seed") seed = number(flag, argv[i + 1]);
        else return usage();
    }
    if (threads < 1 || threads > max_threads) throw ferrite::usage_error("--threads wants 1 to 16");
    return run(pool, dir, static_cast<unsigned>(threads), ops, seed);
} catch (const ferrite::usage_error& e) {
    std::fprintf(stderr, "map_kill_worker: %s\n", e.what());
    return 2;
} catch (const std::exception& e) {
    std::fprintf(stderr, "map_kill_worker: %s\n", e.what());
    return 1;
}
