// What a sweep collects from each run: values read from the run's summary.json by path ("sim_time_s",
// "resources.noc.utilisation_max", "mapping.tiles") and formulas over them. The known paths come from the
// summary's own to_json(), so a metric name is checked against what tessel really writes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/sweep/spec.h"

namespace tessel::sweep {

/// summary.json's scalar top-level keys, and the fields of each resources[] entry.
std::vector<std::string> summary_keys();
std::vector<std::string> resource_fields();

/// Empty when `path` names a value summary.json has: a scalar top-level key, resources.NAME.FIELD (NAME as
/// tessel names resource groups, e.g. noc, hbm, tile[*].pe), or anything under mapping. Otherwise why not.
std::string summary_path_error(const std::string& path);

/// The value at `path` in a run's summary; null when the run has no such value.
nlohmann::json summary_value(const nlohmann::json& summary, const std::string& path);

/// Every metric for one run, in spec order: paths read from the summary, formulas evaluated over earlier
/// metrics, the point's parameters and summary paths. A formula that cannot be evaluated gives null.
nlohmann::ordered_json collect_metrics(const std::vector<metric>& metrics, const nlohmann::json& summary,
                                       const std::vector<param>& params);

}  // namespace tessel::sweep
