// A one-line progress bar on stderr, drawn only when stderr is a terminal (CI logs stay
// clean). Redraws at most every 100 ms.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ferrite::cli {

class progress_bar {
public:
    explicit progress_bar(std::string label);
    ~progress_bar();  // clears the line
    void update(std::uint64_t done, std::uint64_t total);
    void set_label(std::string label) { label_ = std::move(label); }

private:
    std::string label_;
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace ferrite::cli
