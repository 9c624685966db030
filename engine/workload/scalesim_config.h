// SCALE-Sim configuration files (.cfg, configparser's INI format: scalesim-project/scale-sim-v2, configs/) as
// settings of tessel's one-PE systolic platform, so a course's SCALE-Sim array runs on tessel unchanged.
#pragma once

#include <string>

namespace tessel {

/// The `--set` flags that make the one-PE systolic platform the array the configuration at `path` describes
/// (ArrayHeight, ArrayWidth, Dataflow; its SRAM sizes and bandwidths are SCALE-Sim's memory model, not used here).
/// Throws input_error with file:line:column for a missing key or a bad value.
std::string scalesim_settings(const std::string& path);

}  // namespace tessel
