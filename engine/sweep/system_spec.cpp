#include "engine/sweep/system_spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <sstream>

#include "engine/netlist/platform.h"
#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel::sweep {

namespace fs = std::filesystem;

system_spec parse_system(const std::string& text, bool power) {
    system_spec s;
    const size_t colon = text.find(':');
    s.platform = text.substr(0, colon);
    if (s.platform.empty()) throw input_error("--system '" + text + "': expected PLATFORM[:PARAM=VALUE,...]");
    s.label = fs::path(s.platform).stem().string();
    if (colon != std::string::npos) {
        std::stringstream ss(text.substr(colon + 1));
        std::string kv;
        while (std::getline(ss, kv, ',')) {
            const size_t eq = kv.find('=');
            if (eq == std::string::npos && power && !kv.empty()) {
                if (!s.power_param.empty())
                    throw input_error(std::string("--system '")
                                          .append(text)
                                          .append("': --power sizes one parameter per system, but '")
                                          .append(s.power_param)
                                          .append("' and '")
                                          .append(kv)
                                          .append("' have no value"));
                s.power_param = kv;
                continue;
            }
            if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
                throw input_error(std::string("--system '")
                                      .append(text)
                                      .append("': expected PARAM=VALUE after ':', got '")
                                      .append(kv)
                                      .append("'")
                                      .append(eq == std::string::npos && !power
                                                  ? " (a parameter without a value is the one --power sizes)"
                                                  : ""));
            for (const auto& given : s.sets)
                if (given.substr(0, given.find('=')) == kv.substr(0, eq))
                    throw input_error("--system '" + text + "': '" + kv.substr(0, eq) + "' is given twice");
            s.sets.push_back(kv);
            s.label += " " + kv;
        }
    }
    if (power && s.power_param.empty())
        throw input_error("--system '" + text +
                          "': with --power, name the parameter to size the system by, without a value (e.g. " +
                          s.platform + ":nodes)");
    return s;
}

namespace {

/// Settings of the plan (parallel.*, workload.*), not of the platform: they do not change what loads or its TDP.
bool plan_key(const std::string& kv) { return kv.rfind("parallel.", 0) == 0 || kv.rfind("workload.", 0) == 0; }

/// Loads `sys` once as given (file and size parameters), so that a malformed --system (a missing file, a parameter
/// the system does not have, a value it refuses) is an error before any plan runs, not a "does not train" row.
void check_system(const system_spec& sys, const sweep::platform_resolver& resolve) {
    sim_context sim;
    param_context ctx;
    for (const auto& kv : sys.sets)
        if (!plan_key(kv)) ctx.add_override(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
    try {
        const std::string file = resolve ? resolve(sys.platform) : sys.platform;
        const std::unique_ptr<platform> plat = platform::load(file, ctx, sim);
        for (const auto& unused : ctx.unused_overrides()) {
            const std::string key = unused.substr(0, unused.find('='));
            if (key.find('.') == std::string::npos)  // a chip's parameters (gpu.x) are read later, by its mapper
                throw input_error(std::string("'").append(key).append("' is not a parameter of ").append(file));
        }
    } catch (const input_error& e) {
        throw input_error("--system '" + sys.label + "': " + e.message());
    }
}

/// Sizes `sys` to a power budget: the largest value of its power parameter (1, 2, ...) whose declared TDP (the
/// chips' and the system's own `tdp:`) is within `budget` watts. Values the system refuses (a TPU pod's chips
/// must fill its torus) are skipped; the TDP is taken to grow with the parameter, so the search stops at the
/// first value over the budget. Linear in the size: a system is loaded once per value.
void size_to_power(system_spec& sys, double budget, const sweep::platform_resolver& resolve) {
    const std::string file = resolve ? resolve(sys.platform) : sys.platform;
    constexpr int most = 4096;
    std::string refused;  // why the first refused value was refused
    int best = 0, over_at = 0;
    double over = 0;
    for (int v = 1; v <= most; ++v) {
        sim_context sim;
        param_context ctx;
        for (const auto& kv : sys.sets) {  // the platform's own (parallel.* and workload.* do not change its TDP)
            const size_t eq = kv.find('=');
            if (!plan_key(kv)) ctx.add_override(kv.substr(0, eq), kv.substr(eq + 1));
        }
        ctx.add_override(sys.power_param, std::to_string(v));
        std::unique_ptr<platform> plat;
        try {
            plat = platform::load(file, ctx, sim);
        } catch (const input_error& e) {
            if (refused.empty()) refused = sys.power_param + "=" + std::to_string(v) + ": " + e.message();
            continue;
        }
        // (Only the system's own parameters: a chip's `params:` are read later, by its mapper.)
        for (const auto& unused : ctx.unused_overrides()) {
            const std::string key = unused.substr(0, unused.find('='));
            bool named = key == sys.power_param;
            for (const auto& kv : sys.sets) named = named || (!plan_key(kv) && kv.substr(0, kv.find('=')) == key);
            if (named)
                throw input_error(std::string("--system '")
                                      .append(sys.label)
                                      .append("': '")
                                      .append(key)
                                      .append("' is not a parameter of ")
                                      .append(file));
        }
        const double tdp = plat->tdp_watts();
        if (tdp <= 0)
            throw input_error(
                "--power: " + sys.label +
                " declares no TDP (`tdp:` on its chips or on the system), so it cannot be sized to a power budget");
        if (tdp > budget) {
            over = tdp;
            over_at = v;
            break;
        }
        best = v;
        sys.tdp = tdp;
    }
    if (best == 0) {
        if (over > 0)
            throw input_error("--power " + format_power(budget) + ": the smallest " + sys.label + " (" +
                              sys.power_param + "=" + std::to_string(over_at) + ") already draws " +
                              format_power(over));
        throw input_error("--system '" + sys.label + "': no value of '" + sys.power_param + "' from 1 to " +
                          std::to_string(most) + " loads; the first: " + refused);
    }
    const std::string kv = sys.power_param + "=" + std::to_string(best);
    sys.sets.push_back(kv);
    sys.label = fs::path(sys.platform).stem().string();
    for (const auto& x : sys.sets) sys.label += " " + x;
}

}  // namespace

std::string folder_name(const std::string& label) {
    std::string f;
    for (char c : label)
        f += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
    return f;
}

std::string systems_table(const std::vector<std::vector<std::string>>& rows, std::size_t plan_column) {
    const std::size_t columns = rows.empty() ? 0 : rows.front().size();
    std::vector<std::size_t> w(columns, 0);
    for (const auto& l : rows)
        for (std::size_t c = 0; c < l.size() && c < columns; ++c)
            if (l.size() == columns || c + 1 < l.size()) w[c] = std::max(w[c], l[c].size());
    std::string text;
    for (const auto& l : rows) {
        for (std::size_t c = 0; c < l.size(); ++c) {
            const bool last = c + 1 == l.size(), right = c > 0 && c != plan_column;
            const std::size_t width = (l.size() == columns || !last) && c < columns ? w[c] : l[c].size();
            const std::string pad(width - std::min(width, l[c].size()), ' ');
            text += "  " + (right ? pad + l[c] : l[c] + (last ? "" : pad));
        }
        text += "\n";
    }
    return text;
}

std::vector<system_spec> resolve_systems(const std::vector<std::string>& texts, double power_watts,
                                         const platform_resolver& resolve) {
    const bool power = power_watts > 0;
    std::vector<system_spec> specs;
    specs.reserve(texts.size());
    for (const auto& s : texts) specs.push_back(parse_system(s, power));
    for (size_t i = 0; i < specs.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (specs[i].label == specs[j].label && specs[i].power_param == specs[j].power_param)
                throw input_error("--system '" + specs[i].label + "' is given twice");
    for (auto& sys : specs)
        if (power)
            size_to_power(sys, power_watts, resolve);
        else
            check_system(sys, resolve);
    return specs;
}

}  // namespace tessel::sweep
