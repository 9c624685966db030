#include "engine/sweep/generated_spec.h"

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

namespace tessel::sweep {

std::string yaml_quote(const std::string& s) { return nlohmann::json(s).dump(); }

std::string absolute_if_file(const std::string& s) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(s, ec)) return std::filesystem::absolute(s).lexically_normal().string();
    return s;
}

std::string generated_spec::yaml() const {
    std::ostringstream y;
    y << "# " << comment << "\n"
      << "sweep: " << name << "\n"
      << "platform: " << yaml_quote(platform) << "\n";
    if (!workload.empty()) y << "workload: " << yaml_quote(workload) << "\n";
    if (!platform_sets.empty() || !workload_sets.empty()) {
        y << "set:\n";
        for (const auto& [k, v] : platform_sets) y << "  " << yaml_quote(k) << ": " << yaml_quote(v) << "\n";
        for (const auto& [k, v] : workload_sets)
            y << "  " << yaml_quote("workload." + k) << ": " << yaml_quote(v) << "\n";
    }
    y << "axes:\n";
    for (const auto& [n, values] : axes) {
        y << "  " << yaml_quote(n) << ": [";
        for (size_t i = 0; i < values.size(); ++i) y << (i ? ", " : "") << yaml_quote(values[i]);
        y << "]\n";
    }
    if (!stats) y << "stats: false\n";
    y << "zip:\n  - [";
    for (size_t i = 0; i < axes.size(); ++i) y << (i ? ", " : "") << yaml_quote(axes[i].first);
    y << "]\n";
    return y.str();
}

}  // namespace tessel::sweep
