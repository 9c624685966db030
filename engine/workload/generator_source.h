// A generator source: a model generator (engine/workload/generators.h) with its parameters declared and the
// workload file's values set, built at any overrides by running the generator, with nothing read again.
#pragma once

#include <memory>
#include <string>

#include "engine/workload/generators.h"
#include "engine/workload/source.h"
#include "engine/workload/workload_params.h"

namespace tessel {

/// `params` comes from declare_generator_params with the workload file's own values set (set_user); `name`
/// renames the graph (a workload file's `workload:`), empty keeps the generator's.
std::shared_ptr<const workload_source> make_generator_source(std::string spec, const generator_info& gen,
                                                             workload_params params, std::string name = {});

}  // namespace tessel
