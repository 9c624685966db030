// The systems a comparison runs on (`tessel compare`, `tessel compare --serve`): each --system names a system
// platform and its size parameters ("platforms/systems/dgx_h100.yaml:nodes=2"), or at equal power the one
// parameter to size it by ("dgx_h100.yaml:nodes" with --power 20kW): the largest value whose declared TDP fits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/sweep/runner.h"

namespace tessel::sweep {

/// One --system as given: "platforms/systems/dgx_h100.yaml:nodes=2", or with --power "dgx_h100.yaml:nodes".
struct system_spec {
    std::string platform, label;
    std::vector<std::string> sets;  // its size parameters, "nodes=2"
    std::string power_param;        // with --power: the parameter sized to the budget (named without a value)
    double tdp = 0;                 // with --power: the declared TDP at the size chosen
};

/// Reads PLATFORM[:PARAM=VALUE,...] (with `power`, one PARAM without a value); input_error quoting it otherwise.
system_spec parse_system(const std::string& text, bool power);

/// Every --system read and loaded once, so that a malformed one (a missing file, a parameter the system does not
/// have, a value it refuses, one given twice) is an input_error before anything runs. With `power_watts` > 0 each
/// is sized to that budget (its `sets` and `tdp` say to what).
std::vector<system_spec> resolve_systems(const std::vector<std::string>& texts, double power_watts,
                                         const platform_resolver& resolve);

/// A comparison's table, one row a system after the header: columns right-aligned but the system's name and its
/// plan (`plan_column`); a failed system's row shares the leading columns, then says why in one last cell, which
/// does not widen the column it starts in. Two spaces before each cell.
std::string systems_table(const std::vector<std::vector<std::string>>& rows, std::size_t plan_column);

/// The label as a folder name: anything but letters, digits, '.', '-' and '_' becomes '_'.
std::string folder_name(const std::string& label);

}  // namespace tessel::sweep
