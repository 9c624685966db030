#include "engine/sweep/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/report/summary.h"
#include "models/core/yaml_node.h"

namespace tessel::sweep {

std::vector<std::string> summary_keys() {
    std::vector<std::string> keys;
    const nlohmann::json j = run_summary{}.to_json();
    for (auto it = j.begin(); it != j.end(); ++it)
        if (it.value().is_primitive()) keys.push_back(it.key());
    // Added by the run session next to the summary's own values.
    keys.emplace_back("tessel_version");
    keys.emplace_back("config_hash");
    return keys;
}

std::vector<std::string> resource_fields() {
    run_summary s;
    s.resources.emplace_back();
    const nlohmann::json j = s.to_json();
    std::vector<std::string> fields;
    for (auto it = j["resources"][0].begin(); it != j["resources"][0].end(); ++it) fields.push_back(it.key());
    return fields;
}

std::string summary_path_error(const std::string& path) {
    if (path.rfind("mapping.", 0) == 0 && path.size() > 8) return {};
    if (path.rfind("resources.", 0) == 0) {
        const std::string rest = path.substr(10);
        const size_t dot = rest.rfind('.');
        const std::vector<std::string> fields = resource_fields();
        if (dot == std::string::npos || dot == 0)
            return "expected resources.NAME.FIELD, e.g. resources.noc.utilisation_max (fields: " + join(fields) + ")";
        const std::string field = rest.substr(dot + 1);
        if (std::find(fields.begin(), fields.end(), field) == fields.end())
            return "a resource has no field '" + field + "'" + did_you_mean(field, fields) +
                   "; fields: " + join(fields);
        return {};
    }
    const std::vector<std::string> keys = summary_keys();
    if (std::find(keys.begin(), keys.end(), path) != keys.end()) return {};
    return "summary.json has no value '" + path + "'" + did_you_mean(path, keys) + "; values: " + join(keys) +
           ", resources.NAME.FIELD, mapping.PATH";
}

nlohmann::json summary_value(const nlohmann::json& summary, const std::string& path) {
    if (path.rfind("resources.", 0) == 0) {
        const std::string rest = path.substr(10);
        const size_t dot = rest.rfind('.');
        if (dot == std::string::npos || !summary.contains("resources")) return nullptr;
        const std::string name = rest.substr(0, dot), field = rest.substr(dot + 1);
        for (const auto& r : summary["resources"])
            if (r.value("name", "") == name && r.contains(field)) return r[field];
        return nullptr;
    }
    // A dotted path into objects (mapping.tiles).
    const nlohmann::json* at = &summary;
    size_t start = 0;
    while (true) {
        const size_t dot = path.find('.', start);
        const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!at->is_object() || !at->contains(part)) return nullptr;
        at = &(*at)[part];
        if (dot == std::string::npos) return *at;
        start = dot + 1;
    }
}

nlohmann::ordered_json collect_metrics(const std::vector<metric>& metrics, const nlohmann::json& summary,
                                       const std::vector<param>& params) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    std::map<std::string, expr_value> known;
    auto as_value = [](const nlohmann::json& j) -> std::optional<expr_value> {
        if (j.is_number()) return j.get<double>();
        if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
        if (j.is_string()) return j.get<std::string>();
        return std::nullopt;
    };
    const expr_scope scope = [&](std::string_view name) -> std::optional<expr_value> {
        const std::string n(name);
        if (const auto it = known.find(n); it != known.end()) return it->second;
        for (const auto& p : params)
            if (p.name == n) return param_value(p.value);
        return as_value(summary_value(summary, n));
    };
    for (const auto& m : metrics) {
        nlohmann::json v;
        if (m.expr) {
            try {
                const expr_value r = m.expr->expr.eval(scope);
                if (std::holds_alternative<double>(r)) {
                    const double d = std::get<double>(r);
                    if (std::isfinite(d)) v = d;
                } else {
                    v = std::get<std::string>(r);
                }
            } catch (const expr_error&) {
                // A formula over a value this run does not have (a failed run, a resource it never used).
            }
        } else {
            v = summary_value(summary, m.path);
        }
        if (const auto e = as_value(v)) known[m.name] = *e;
        out[m.name] = v;
    }
    return out;
}

}  // namespace tessel::sweep
