#include "engine/sweep/validate.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/program/program_yaml.h"
#include "engine/workload/load.h"
#include "models/core/sim_context.h"
#include "models/core/yaml_node.h"

namespace tessel::sweep {

namespace {

bool is_workload_param(const std::string& name) { return name.rfind("workload.", 0) == 0; }

std::string describe(const point& p) {
    std::string s;
    for (const auto& q : p.params) s += (s.empty() ? "" : " ") + q.name + "=" + q.value;
    return s.empty() ? "the base configuration" : s;
}

/// Rethrows a loader's error at the place in the sweep that caused it: the parameter its message names
/// ("--set noc.link_bandwidth=64: ..."), else the point's first axis.
[[noreturn]] void blame(const spec& s, const point& p, const input_error& e, const std::vector<param>& candidates) {
    const std::string msg = e.what();
    const param* culprit = nullptr;
    for (const auto& c : candidates) {
        const std::string tag = "--set " + c.name;
        const size_t at = msg.find(tag);
        if (at == std::string::npos) continue;
        const size_t end = at + tag.size();
        const bool whole = end == msg.size() || msg[end] == '=' || msg[end] == ':' || msg[end] == ' ';
        if (whole && (!culprit || c.name.size() > culprit->name.size())) culprit = &c;
    }
    // Without a named parameter the platform (or workload) itself, or a combination of values, is at fault.
    source_location where = s.where_of("platform", p.platform);
    if (culprit) where = s.where_of(culprit->name, culprit->value);
    throw input_error("point " + std::to_string(p.index) + " (" + describe(p) + ") does not load: " + msg, where);
}

std::string resolved(const spec& s, const point& p, const std::string& what, const std::string& value,
                     const platform_resolver& rp) {
    try {
        return resolve_input(s, what, value, rp);
    } catch (const input_error& e) {
        throw input_error(e.message(), s.where_of(what, value));
    }
}

}  // namespace

validation validate_points(const spec& s, const std::vector<point>& points, const platform_resolver& resolve_platform,
                           const std::set<std::string>& computed) {
    validation v;
    static int serial = 0;  // module names must be unique within the process
    // Platforms: one load per point that brings a (path, value) pair not loaded before on that platform.
    std::map<std::string, std::set<std::pair<std::string, std::string>>> covered;
    std::set<std::pair<std::string, std::string>> loaded;  // (platform, program) pairs loaded at least once
    for (const point& p : points) {
        const std::string plat_file = resolved(s, p, "platform", p.platform, resolve_platform);
        std::vector<param> sets;
        for (const auto& q : p.sets)
            if (!is_workload_param(q.name)) sets.push_back(q);
        const std::string program_file =
            p.program.empty() ? "" : resolved(s, p, "program", p.program, resolve_platform);
        auto& seen = covered[plat_file];
        bool fresh = loaded.insert({plat_file, program_file}).second;
        for (const auto& q : sets)
            fresh |= seen.insert({q.name, computed.count(q.name) ? std::string() : q.value}).second;
        if (!fresh) continue;

        sim_context sim;
        param_context ctx;
        for (const auto& q : sets) ctx.add_override(q.name, q.value);
        std::vector<std::string> unused;
        std::vector<std::string> known;
        try {
            const yaml_node root = yaml_node::load_file(plat_file);
            const std::string name = "sweep_check_" + std::to_string(serial++);
            platform plat(name.c_str(), root, ctx, sim);
            if (!p.workload.empty()) {
                create_mapper(plat, ctx);
            } else {
                load_program(program_file, plat, &ctx);
            }
            unused = ctx.unused_overrides();
            for (const auto& [k, val] : ctx.resolved()) known.push_back(k);
        } catch (const input_error& e) {
            blame(s, p, e, sets);
        }
        ++v.platform_loads;
        if (!unused.empty()) {
            const std::string& path = unused.front();
            throw input_error(
                "'" + path + "' is not a parameter of platform '" + p.platform + "'" + did_you_mean(path, known) +
                    " (platform parameters are COMPONENT.PARAM such as noc.link_bandwidth, mapper options "
                    "mapper.NAME" +
                    std::string(p.workload.empty() ? ")" : ", workload parameters workload.NAME)"),
                s.where_of(path));
        }
    }

    // Workloads: unknown parameter names first (with suggestions), then each value as part of a real point.
    std::map<std::string, std::vector<std::string>> names_of;
    std::map<std::string, std::set<std::pair<std::string, std::string>>> wl_covered;
    for (const point& p : points) {
        std::vector<param> sets;
        for (const auto& q : p.sets)
            if (is_workload_param(q.name)) sets.push_back(q);
        if (p.workload.empty()) {
            if (!sets.empty())
                throw input_error("'" + sets.front().name + "': a program has no workload parameters",
                                  s.where_of(sets.front().name));
            continue;
        }
        const std::string wl = resolved(s, p, "workload", p.workload, resolve_platform);
        if (!names_of.count(wl)) {
            try {
                const workload_graph g = load_workload(wl, {});
                auto& names = names_of[wl];
                for (const auto& [k, val] : g.parameters) names.push_back(k);
            } catch (const input_error& e) {
                throw input_error("workload '" + p.workload + "' does not load: " + e.what(),
                                  s.where_of("workload", p.workload));
            }
            ++v.workload_loads;
        }
        const auto& names = names_of[wl];
        for (const auto& q : sets) {
            const std::string n = q.name.substr(9);
            if (std::find(names.begin(), names.end(), n) == names.end())
                throw input_error("workload '" + p.workload + "' has no parameter '" + n + "'" +
                                      did_you_mean(n, names) + "; its parameters are: " + join(names),
                                  s.where_of(q.name));
        }
        auto& seen = wl_covered[wl];
        bool fresh = false;
        for (const auto& q : sets) fresh |= !seen.count({q.name, q.value});
        if (!fresh) continue;
        for (const auto& q : sets) seen.insert({q.name, q.value});
        std::map<std::string, std::string> overrides;
        for (const auto& q : sets) overrides[q.name.substr(9)] = q.value;
        try {
            load_workload(wl, overrides);
        } catch (const input_error& e) {
            blame(s, p, e, sets);
        }
        ++v.workload_loads;
    }
    return v;
}

}  // namespace tessel::sweep
