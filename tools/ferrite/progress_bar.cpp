#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace ferrite::cli {

progress_bar::progress_bar(std::string label) : label_(std::move(label)), enabled_(::isatty(2) == 1) {}

progress_bar::~progress_bar() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void progress_bar::update(std::uint64_t done, std::uint64_t total) {
    if (!enabled_ || total == 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr int width = 30;
    const int filled = static_cast<int>(width * done / total);
    std::fprintf(stderr, "\r\033[K%s [%.*s%*s] %llu/%llu", label_.c_str(), filled,
                 "##############################", width - filled, "",
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
    std::fflush(stderr);
    drawn_ = true;
}

}  // namespace ferrite::cli
