// The front a serving buyer chooses on: the points (tessel serve --curve, plan --serve, compare --serve) that no
// other point beats on both tokens/s per user and tokens/s per chip.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace tessel::serve {

/// Sets `flag` on each point (a serving metrics object) to whether no point of `points` has both more
/// tokens_per_s_per_user and more output_tokens_per_s_per_chip.
void mark_pareto(const std::vector<nlohmann::ordered_json*>& points, const char* flag);

}  // namespace tessel::serve
