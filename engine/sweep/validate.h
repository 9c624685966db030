// Checks a sweep against the platforms, workloads and programs it names before any point runs: every --set path
// must exist and every value must load, so a typo fails in a second with file:line:column in the sweep file
// instead of in every one of a hundred runs. Loads happen in this process (building the platform's module tree
// and mapper, parsing the workload), without simulating; each distinct parameter value is loaded at least once,
// always as part of a real point, so combinations the filter removed are never judged.
#pragma once

#include <set>
#include <vector>

#include "engine/sweep/runner.h"
#include "engine/sweep/spec.h"

namespace tessel::sweep {

struct validation {
    size_t platform_loads = 0;
    size_t workload_loads = 0;
};

/// Throws input_error located in the spec (the axis, value, derived parameter or fixed set at fault). A new value of
/// a parameter in `computed` (values the caller computed, not a user's) loads nothing again once one value has.
validation validate_points(const spec& s, const std::vector<point>& points, const platform_resolver& resolve_platform,
                           const std::set<std::string>& computed = {});

}  // namespace tessel::sweep
