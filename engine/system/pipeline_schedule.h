// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes of its model
// chunks over the microbatches of an iteration.
//
// - gpipe (Huang et al. 2019): every forward, then every backward, microbatches in order (SC21 Figure 3, top);
//   each stage holds the activations of all m microbatches.
// - 1f1b (PipeDream-flush, Narayanan et al. 2021): stage s runs min(pp - s - 1, m) warm-up forwards, then
//   alternates one forward and one backward, then drains the remaining backwards; stage s holds at most pp - s
//   microbatches.
// - interleaved_1f1b (Narayanan et al., SC21, Megatron-LM's forward_backward_pipelining_with_interleaving): each
//   stage holds `interleave` chunks (chunk c on stage c % pp); forwards run pp microbatches through one chunk, then
//   the next chunk; warm-up is (pp - s - 1) * 2 + (interleave - 1) * pp forward items; backwards visit the chunks
//   in reverse. Needs m to be a multiple of pp.
//
// The ideal bubble (idle fraction of the iteration with equal stage times and free communication) is
// (pp - 1) / m for gpipe and 1f1b and (pp - 1) / (m * interleave) for the interleaved schedule (SC21, sections
// 2.2.1 and 2.2.2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/system/parallel_plan.h"

namespace tessel {

enum class pass_dir : std::uint8_t { forward, backward };

/// One step of a stage's schedule: the forward or backward pass of one microbatch through one model chunk.
struct schedule_item {
    int microbatch = 0;
    int chunk = 0;  // global chunk index: stage + pp * (virtual chunk on the stage)
    pass_dir pass = pass_dir::forward;

    bool operator==(const schedule_item& o) const {
        return microbatch == o.microbatch && chunk == o.chunk && pass == o.pass;
    }
};

/// An inference step's items (forward passes only): stage s runs every microbatch through its first chunk, then
/// its next (as gpipe's forward half). Per stage.
std::vector<std::vector<schedule_item>> forward_schedule(const parallel_plan& plan, int microbatches);

/// The items stage `stage` (0 .. pp-1) runs, in order, for `schedule` (gpipe, 1f1b, interleaved_1f1b) with
/// `interleave` chunks per stage and `microbatches` microbatches. Throws input_error on an impossible combination
/// (interleave > 1 without interleaved_1f1b, interleaved with m not a multiple of pp).
std::vector<schedule_item> stage_schedule(const std::string& schedule, int pp, int interleave, int microbatches,
                                          int stage);

/// stage_schedule for every stage of the plan.
std::vector<std::vector<schedule_item>> pipeline_schedule(const parallel_plan& plan, int microbatches);

/// The ideal bubble fraction: (pp - 1) / m, divided by interleave for interleaved_1f1b.
double bubble_fraction(const std::string& schedule, int pp, int interleave, int microbatches);

/// "F0 F1 B0 ..." (with interleave > 1: "F0.c1" = forward of microbatch 0 through chunk 1).
std::string schedule_str(const std::vector<schedule_item>& items, bool show_chunk);

}  // namespace tessel
