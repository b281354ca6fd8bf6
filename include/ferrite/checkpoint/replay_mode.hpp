// ferrite/checkpoint/replay_mode.hpp: where CpNvm applies a committed epoch to the persistent
// image (checkpointer.hpp's header comment, "Replay", argues both; docs/checkpointing.md
// measures them). Its own header so that program_image's options name it without the
// checkpointer.
#pragma once

namespace ferrite::checkpoint {

enum class replay_mode {
    in_line,     // by the last thread at barrier 2, from the volatile image, before the release
    background,  // by a replayer thread, from the logs, while the participants go on
};

}  // namespace ferrite::checkpoint
