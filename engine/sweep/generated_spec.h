// Sweep specs that a command writes for itself (`tessel plan`'s plans, `tessel serve`'s batch steps and KV
// transfers): one zipped group of axes over a platform and a workload (or a `program` axis) with fixed `set:`
// values, written where the user can re-run it with `tessel sweep`.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel::sweep {

struct generated_spec {
    std::string comment;                                             // the first line, after "# "
    std::string name, platform, workload;                            // no workload: a "program" axis names the programs
    std::vector<std::pair<std::string, std::string>> platform_sets;  // in order
    std::map<std::string, std::string> workload_sets;                // KEY without "workload."
    std::vector<std::pair<std::string, std::vector<std::string>>> axes;  // zipped: equal lengths
    bool stats = true;  // false: the points write no stats.json and stats.csv (a sample's, an estimate's)

    /// The spec as YAML.
    std::string yaml() const;
};

/// A string as a YAML scalar (a JSON string is one).
std::string yaml_quote(const std::string& s);

/// The absolute path of a file the user named relative to the working directory (the points run elsewhere), else
/// the name as it is (a bundled platform or workload).
std::string absolute_if_file(const std::string& s);

}  // namespace tessel::sweep
