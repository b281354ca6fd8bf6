// ferrite/sim/media_image_crash.hpp: media_image::crash_image (template, so that the
// caller's random stream is used directly). Included by media_image.hpp only.
#pragma once

#include "ferrite/sim/media_image.hpp"  // which includes this file at its end
#include <algorithm>
#include <cstring>

namespace ferrite::sim {

template <class Random>
void media_image::crash_image(Random& random, std::vector<const line_snapshot*>& by_line,
                              std::vector<std::byte>& out) const {
    out.resize(media_.size());
    std::memcpy(out.data(), media_.data(), media_.size());
    // Candidate versions per line, beyond the media contents: queued snapshots newer than
    // the media, then the current contents. Lines without pending snapshots are handled in
    // the scan below; lines with them first collect their candidates here.
    std::sort(by_line.begin(), by_line.end(),
              [](const line_snapshot* a, const line_snapshot* b) { return a->line < b->line; });
    std::size_t next_pending = 0;
    std::array<const line_snapshot*, 16> candidates{};
    for (std::size_t line = 0; line < versions_.size(); ++line) {
        const std::size_t off = line * line_size;
        std::size_t n = 0;
        while (next_pending < by_line.size() && by_line[next_pending]->line == line) {
            const auto* s = by_line[next_pending++];
            if (s->version > versions_[line] && n < candidates.size()) candidates[n++] = s;
        }
        const bool dirty = std::memcmp(base_ + off, media_.data() + off, line_size) != 0;
        if (!dirty && n == 0) continue;
        // Choices: 0 = media, 1..n = a queued snapshot, n+1 = current contents.
        const std::size_t choice = static_cast<std::size_t>(random.below(n + 2));
        if (choice == 0) continue;
        if (choice == n + 1) {
            std::memcpy(out.data() + off, base_ + off, line_size);
            continue;
        }
        const auto* s = candidates[choice - 1];
        for (std::size_t b = 0; b < line_size; ++b)
            if (s->mask >> b & 1u) out[off + b] = s->bytes[b];
    }
}

}  // namespace ferrite::sim
