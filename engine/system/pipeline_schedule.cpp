#include "engine/system/pipeline_schedule.h"

#include <algorithm>

#include "models/core/error.h"

namespace tessel {

std::vector<schedule_item> stage_schedule(const std::string& schedule, int pp, int interleave, int microbatches,
                                          int stage) {
    if (pp < 1 || interleave < 1 || microbatches < 1 || stage < 0 || stage >= pp)
        fail("pipeline schedule: needs pp, interleave and microbatches of at least 1 and a stage in 0.." +
             std::to_string(pp - 1));
    const int m = microbatches;
    std::vector<schedule_item> out;
    auto fwd = [&](int mb, int chunk) { out.push_back({mb, chunk, pass_dir::forward}); };
    auto bwd = [&](int mb, int chunk) { out.push_back({mb, chunk, pass_dir::backward}); };
    if (schedule == "gpipe" || schedule == "1f1b") {
        if (interleave != 1) fail("pipeline schedule " + schedule + ": interleave > 1 needs interleaved_1f1b");
        if (schedule == "gpipe") {
            for (int i = 0; i < m; ++i) fwd(i, stage);
            for (int i = 0; i < m; ++i) bwd(i, stage);
            return out;
        }
        const int warmup = std::min(pp - stage - 1, m);
        for (int i = 0; i < warmup; ++i) fwd(i, stage);
        for (int i = 0; i < m - warmup; ++i) {
            fwd(warmup + i, stage);
            bwd(i, stage);
        }
        for (int i = m - warmup; i < m; ++i) bwd(i, stage);
        return out;
    }
    if (schedule != "interleaved_1f1b")
        fail("pipeline schedule '" + schedule + "' is not one of: gpipe, 1f1b, interleaved_1f1b");
    if (pp > 1 && m % pp)
        fail("pipeline schedule interleaved_1f1b: the microbatches (" + std::to_string(m) +
             ") must be a multiple of pp (" + std::to_string(pp) + ")");
    // Megatron-LM: item k of a direction is microbatch (k / (pp * v)) * pp + k % pp through virtual chunk
    // (k % (pp * v)) / pp, visited in reverse for the backward pass.
    const int v = interleave, total = m * v;
    auto item = [&](int k, bool forward) {
        const int in_group = k % (pp * v);
        int vc = in_group / pp;
        if (!forward) vc = v - vc - 1;
        const int mb = (k / (pp * v)) * pp + k % pp;
        return schedule_item{mb, stage + pp * vc, forward ? pass_dir::forward : pass_dir::backward};
    };
    int warmup = (pp - stage - 1) * 2 + (v - 1) * pp;
    if (v == 1) warmup = pp - stage - 1;  // plain 1F1B
    warmup = std::min(warmup, total);
    for (int k = 0; k < warmup; ++k) out.push_back(item(k, true));
    for (int k = 0; k < total - warmup; ++k) {
        out.push_back(item(warmup + k, true));
        out.push_back(item(k, false));
    }
    for (int k = total - warmup; k < total; ++k) out.push_back(item(k, false));
    return out;
}

std::vector<std::vector<schedule_item>> pipeline_schedule(const parallel_plan& plan, int microbatches) {
    std::vector<std::vector<schedule_item>> s;
    for (int stage = 0; stage < plan.pp; ++stage)
        s.push_back(stage_schedule(plan.schedule, plan.pp, plan.interleave, microbatches, stage));
    return s;
}

double bubble_fraction(const std::string& schedule, int pp, int interleave, int microbatches) {
    if (microbatches < 1) return 0;
    const double b = static_cast<double>(pp - 1) / microbatches;
    return schedule == "interleaved_1f1b" ? b / std::max(1, interleave) : b;
}

std::string schedule_str(const std::vector<schedule_item>& items, bool show_chunk) {
    std::string s;
    for (const auto& i : items) {
        if (!s.empty()) s += ' ';
        s += i.pass == pass_dir::forward ? 'F' : 'B';
        s += std::to_string(i.microbatch);
        if (show_chunk) s += ".c" + std::to_string(i.chunk);
    }
    return s;
}

std::vector<std::vector<schedule_item>> forward_schedule(const parallel_plan& plan, int microbatches) {
    std::vector<std::vector<schedule_item>> out(static_cast<size_t>(plan.pp));
    for (int s = 0; s < plan.pp; ++s)
        for (int v = 0; v < plan.interleave; ++v)
            for (int mb = 0; mb < microbatches; ++mb)
                out[static_cast<size_t>(s)].push_back({mb, s + plan.pp * v, pass_dir::forward});
    return out;
}

}  // namespace tessel
