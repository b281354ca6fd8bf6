// Creates a pool at argv[1], writes its root, closes it, opens it again and checks the root.
#include <ferrite/pmem/pool.hpp>
#include <ferrite/pmem/primitives.hpp>

#include <cstdint>
#include <cstdio>

namespace pm = ferrite::pmem;

struct root { std::uint64_t value; };

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    {
        auto pool = pm::pool::create(argv[1], "downstream-v1", 1 << 20);
        auto& r = pool.root<root>();
        r.value = 42;
        pm::pwb(&r.value);
        pm::pfence();
        pool.close();
    }
    auto again = pm::pool::open(argv[1], "downstream-v1");
    const std::uint64_t v = again.root<root>().value;
    again.close();
    std::printf("root value %llu\n", static_cast<unsigned long long>(v));
    return v == 42 ? 0 : 1;
}
