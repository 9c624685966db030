#include "engine/sweep/spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "engine/sweep/metrics.h"
#include "models/core/fingerprint.h"
#include "models/core/limits.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel::sweep {

namespace fs = std::filesystem;

namespace {

// A typo in a range must not ask for a billion points. A hundred thousand points is days of runs on a cluster
// (a million took 11 s and 920 MB to expand before the first point was checked); a larger study is several sweeps.
constexpr size_t max_axis_values = 100000;
constexpr double max_points = 1e5;

bool is_input(const std::string& name) { return name == "platform" || name == "workload" || name == "program"; }

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string cur;
    for (char c : text) {
        if (c == '\n') {
            lines.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    lines.push_back(cur);
    return lines;
}

/// Parsing state: the YAML text (to find where an expression's first character is) and what is declared so far.
class parser {
public:
    parser(const std::string& text, const std::string& file) : m_lines(split_lines(text)) {
        m_spec.file = file;
        const fs::path p(file);
        m_spec.dir = p.has_parent_path() ? p.parent_path().string() : ".";
        m_spec.name = p.stem().string();
        m_root = yaml_node::load_string(text, file);
    }

    spec parse() {
        if (!m_root.is_map()) {
            if (!m_root.defined())
                fail("the sweep file is empty; it needs at least platform, workload and axes", {m_spec.file, 1, 1});
            m_root.fail("a sweep file is a map of sweep, platform, workload, axes, ...");
        }
        m_root.check_keys({"sweep", "description", "platform", "workload", "program", "set", "axes", "zip", "derived",
                           "filter", "metrics", "timeout", "stats", "slurm"},
                          "sweep file");
        if (m_root.has("sweep")) {
            const yaml_node n = m_root["sweep"];
            m_spec.name = n.scalar("sweep");
            // The name becomes a folder (out/sweeps/NAME): one plain component, never a path out of it.
            if (m_spec.name.empty() || m_spec.name == "." || m_spec.name == ".." ||
                m_spec.name.find_first_of("/\\") != std::string::npos ||
                std::any_of(m_spec.name.begin(), m_spec.name.end(),
                            [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
                n.fail("sweep: '" + m_spec.name +
                       "' is not a plain name; it names the results folder out/sweeps/NAME, so it "
                       "cannot be empty, '.' or '..', or hold '/', '\\' or control characters");
        }
        if (m_root.has("description")) m_spec.description = m_root["description"].scalar("description");
        read_input("platform", m_spec.platform, m_spec.platform_where);
        read_input("workload", m_spec.workload, m_spec.workload_where);
        read_input("program", m_spec.program, m_spec.program_where);
        read_sets();
        read_axes();
        check_inputs();
        read_zip();
        read_derived();
        read_filters();
        read_metrics();
        if (m_root.has("stats")) m_spec.stats = m_root["stats"].as_bool("stats");
        if (m_root.has("timeout")) {
            const yaml_node n = m_root["timeout"];
            try {
                m_spec.timeout_s = parse_duration(n.scalar("timeout"));
            } catch (const input_error& e) {
                n.fail("timeout: " + e.message());
            }
        }
        read_slurm();
        return std::move(m_spec);
    }

private:
    std::vector<std::string> m_lines;
    yaml_node m_root;
    spec m_spec;
    std::set<std::string> m_names;  // every parameter a point has: inputs, sets, axes, derived

    void read_input(const char* key, param& p, source_location& where) {
        if (!m_root.has(key)) return;
        const yaml_node n = m_root[key];
        p.value = n.scalar(key);
        where = n.where();
        if (p.value.empty()) n.fail(std::string(key) + ": empty");
    }

    static void check_path(const std::string& name, const source_location& where, const char* what) {
        const bool bad = name.empty() || name.find_first_of(" \t=") != std::string::npos || name.front() == '.' ||
                         name.back() == '.';
        if (bad)
            fail(std::string(what) + " '" + name +
                     "': expected a parameter path such as noc.link_bandwidth, "
                     "workload.batch or mapper.NAME",
                 where);
    }

    void declare(const std::string& name, const source_location& where, const char* what) {
        if (!m_names.insert(name).second)
            fail(std::string(what) + " '" + name + "' is set twice in this sweep (" + m_spec.where_of(name).str() + ")",
                 where);
    }

    void read_sets() {
        const yaml_node n = m_root["set"];
        if (!n.defined()) return;
        n.expect_map("set");
        for (const auto& e : n.entries()) {
            if (is_input(e.key))
                fail("set: '" + e.key + "' is not a --set path; write it at the top level", e.key_where);
            check_path(e.key, e.key_where, "set");
            declare(e.key, e.key_where, "parameter");
            m_spec.sets.push_back({e.key, e.value.scalar("set " + e.key)});
            m_spec.set_where.push_back(e.value.where());
            m_spec.set_key_where.push_back(e.key_where);
        }
    }

    void read_axes() {
        const yaml_node n = m_root["axes"];
        if (!n.defined()) m_root.fail("a sweep needs axes: a map of parameter path: values");
        n.expect_map("axes");
        m_spec.axes_where = n.where();
        if (n.size() == 0) n.fail("axes: empty; give at least one parameter path with its values");
        for (const auto& e : n.entries()) {
            axis a;
            a.name = e.key;
            a.where = e.key_where;
            if (!is_input(e.key)) check_path(e.key, e.key_where, "axis");
            if (is_input(e.key) && input_of(e.key).value.size())
                fail("'" + e.key + "' is both fixed (top level, " + where_of_input(e.key).str() +
                         ") and an axis; keep one",
                     e.key_where);
            declare(e.key, e.key_where, "parameter");
            const std::string what = "axis '" + e.key + "'";
            if (e.value.is_seq()) {
                for (const yaml_node& item : e.value.items()) {
                    a.values.push_back(item.scalar(what + " value"));
                    a.value_where.push_back(item.where());
                }
            } else if (e.value.is_map()) {
                a.values = range_values(e.value, what);
                a.value_where.assign(a.values.size(), e.value.where());
            } else {
                e.value.fail(what +
                             ": expected a list of values ([16B/cycle, 32B/cycle]) or a range ({from: 8, to: 64, "
                             "step: 8}); a single value belongs under set:");
            }
            if (a.values.empty())
                fail(what + " is empty: it has no values, so the sweep would have no points", e.key_where);
            m_spec.axes.push_back(std::move(a));
        }
    }

    const param& input_of(const std::string& name) const {
        return name == "platform" ? m_spec.platform : name == "workload" ? m_spec.workload : m_spec.program;
    }
    const source_location& where_of_input(const std::string& name) const {
        return name == "platform"   ? m_spec.platform_where
               : name == "workload" ? m_spec.workload_where
                                    : m_spec.program_where;
    }

    bool is_axis(const std::string& name) const {
        return std::any_of(m_spec.axes.begin(), m_spec.axes.end(), [&](const axis& a) { return a.name == name; });
    }

    void check_inputs() {
        const bool platform = !m_spec.platform.value.empty() || is_axis("platform");
        const bool workload = !m_spec.workload.value.empty() || is_axis("workload");
        const bool program = !m_spec.program.value.empty() || is_axis("program");
        if (!platform) m_root.fail("a sweep needs a platform (platform: mesh4x4, or an axis over platforms)");
        if (workload == program)
            m_root.fail(workload ? "give either workload or program, not both"
                                 : "a sweep needs a workload (workload: mlp) or a program (program: FILE.yaml)");
    }

    /// The values of a range map, formatted in the unit `from` is written in.
    std::vector<std::string> range_values(const yaml_node& r, const std::string& what) {
        r.check_keys({"from", "to", "step", "factor", "count", "scale", "integer"}, what + " range");
        for (const char* k : {"from", "to"})
            if (!r.has(k)) r.fail(what + ": a range needs from and to, and one of step, factor or count");
        const int kinds = int(r.has("step")) + int(r.has("factor")) + int(r.has("count"));
        if (kinds != 1)
            r.fail(what +
                   ": a range needs exactly one of step (linear), factor (geometric) or count (evenly "
                   "spaced; with scale: log for a log range)");
        struct number {
            double canonical;
            double written;
            std::string unit;
            dimension dim;
        };
        auto read = [&](const char* key) {
            const yaml_node n = r[key];
            const std::string text = n.scalar(what + " " + key);
            number v{};
            char* end = nullptr;
            v.written = std::strtod(text.c_str(), &end);
            if (end == text.c_str())
                n.fail(what + " " + key + ": expected a number with an optional unit, got '" + text + "'");
            v.unit = std::string(end);
            v.unit.erase(0, v.unit.find_first_not_of(' '));
            try {
                const quantity q = parse_quantity(text);
                v.canonical = q.value;
                v.dim = q.dim;
            } catch (const input_error& e) {
                n.fail(what + " " + key + ": " + e.message());
            }
            return v;
        };
        const number from = read("from"), to = read("to");
        if (from.dim != to.dim)
            r["to"].fail(what + ": from is a " + std::string(dimension_name(from.dim)) + " but to is a " +
                         dimension_name(to.dim));
        // Canonical units per unit of `from`, so values print in the unit the user wrote.
        double scale = 1;
        if (from.written != 0)
            scale = from.canonical / from.written;
        else if (!from.unit.empty())
            scale = parse_quantity("1" + from.unit).value;
        const bool integer = r.has("integer") && r["integer"].as_bool(what + " integer");
        if (r.has("scale") && !r.has("count")) r["scale"].fail(what + ": scale goes with count (count: 5, scale: log)");

        std::vector<double> v;
        auto too_many = [&](const yaml_node& n) {
            n.fail(what + ": more than " + std::to_string(max_axis_values) + " values; check the range");
        };
        if (r.has("step")) {
            const number step = read("step");
            if (step.dim != from.dim)
                r["step"].fail(what + ": step is a " + std::string(dimension_name(step.dim)) + " but from is a " +
                               dimension_name(from.dim));
            if (!(step.canonical > 0)) r["step"].fail(what + ": step must be positive");
            const double n = std::floor((to.canonical - from.canonical) / step.canonical + 1e-9);
            if (n + 1 > double(max_axis_values)) too_many(r["step"]);
            for (double i = 0; i <= n; ++i) v.push_back(from.canonical + i * step.canonical);
        } else if (r.has("factor")) {
            const double f = r["factor"].as_number(what + " factor");
            if (!(f > 1)) r["factor"].fail(what + ": factor must be greater than 1");
            if (!(from.canonical > 0)) r["from"].fail(what + ": a geometric range starts above zero");
            for (double x = from.canonical; x <= to.canonical * (1 + 1e-9); x *= f) {
                if (v.size() >= max_axis_values) too_many(r["factor"]);
                v.push_back(x);
            }
        } else {
            const std::int64_t count = r["count"].as_int(what + " count");
            if (count < 1) r["count"].fail(what + ": count must be at least 1");
            if (size_t(count) > max_axis_values) too_many(r["count"]);
            std::string scale_kind = "linear";
            if (r.has("scale")) scale_kind = r["scale"].scalar(what + " scale");
            if (scale_kind != "linear" && scale_kind != "log")
                r["scale"].fail(what + ": scale is linear or log, got '" + scale_kind + "'");
            const bool log = scale_kind == "log";
            if (log && !(from.canonical > 0 && to.canonical > 0))
                r.fail(what + ": a log range needs from and to above zero");
            for (std::int64_t i = 0; i < count; ++i) {
                const double t = count == 1 ? 0.0 : double(i) / double(count - 1);
                v.push_back(log ? from.canonical * std::pow(to.canonical / from.canonical, t)
                                : from.canonical + (to.canonical - from.canonical) * t);
            }
        }
        std::vector<std::string> out;
        for (double x : v) {
            double w = x / scale;
            const double near = std::round(w);
            if (integer || std::fabs(w - near) <= 1e-9 * std::max(1.0, std::fabs(w))) w = near;
            const std::string text = format_value(w) + from.unit;
            if (out.empty() || out.back() != text) out.push_back(text);
        }
        return out;
    }

    void read_zip() {
        std::vector<int> group_of(m_spec.axes.size(), -1);
        std::vector<std::vector<size_t>> zips;
        const yaml_node z = m_root["zip"];
        if (z.defined()) {
            z.expect_seq("zip");
            std::vector<std::string> names;
            for (const auto& a : m_spec.axes) names.push_back(a.name);
            for (const yaml_node& g : z.items()) {
                g.expect_seq("zip entry (a list of axis names that advance together)");
                std::vector<size_t> members;
                for (const yaml_node& item : g.items()) {
                    const std::string name = item.scalar("zip");
                    const auto it = std::find(names.begin(), names.end(), name);
                    if (it == names.end()) item.fail("zip: '" + name + "' is not an axis" + did_you_mean(name, names));
                    const size_t ax = size_t(it - names.begin());
                    if (group_of[ax] >= 0) item.fail("zip: axis '" + name + "' is already zipped with others");
                    group_of[ax] = int(zips.size());
                    members.push_back(ax);
                }
                if (members.empty()) g.fail("zip: empty entry");
                for (size_t ax : members)
                    if (m_spec.axes[ax].values.size() != m_spec.axes[members.front()].values.size())
                        g.fail("zipped axes advance together, so they need the same number of values: '" +
                               m_spec.axes[members.front()].name + "' has " +
                               std::to_string(m_spec.axes[members.front()].values.size()) + ", '" +
                               m_spec.axes[ax].name + "' has " + std::to_string(m_spec.axes[ax].values.size()));
                std::sort(members.begin(), members.end());
                zips.push_back(members);
            }
        }
        std::vector<bool> emitted(zips.size(), false);
        for (size_t ax = 0; ax < m_spec.axes.size(); ++ax) {
            if (group_of[ax] < 0) {
                m_spec.groups.push_back({ax});
            } else if (!emitted[size_t(group_of[ax])]) {
                emitted[size_t(group_of[ax])] = true;
                m_spec.groups.push_back(zips[size_t(group_of[ax])]);
            }
        }
        // A value twice on one axis would run one point twice; zipped axes may repeat a value as long as no whole
        // combination repeats (`tessel plan` zips every plan key: dp=2 comes with several tp).
        for (const auto& g : m_spec.groups) {
            std::set<std::vector<std::string>> seen;
            const axis& first = m_spec.axes[g.front()];
            for (size_t i = 0; i < first.values.size(); ++i) {
                std::vector<std::string> combo;
                combo.reserve(g.size());
                for (size_t ax : g) combo.push_back(m_spec.axes[ax].values[i]);
                if (seen.insert(combo).second) continue;
                if (g.size() == 1)
                    fail("axis '" + first.name + "': value '" + first.values[i] + "' appears twice",
                         first.value_where[i]);
                std::string names;
                for (size_t ax : g)
                    names += (names.empty() ? "" : ", ") + m_spec.axes[ax].name + " = " + m_spec.axes[ax].values[i];
                fail("zipped axes: the combination " + names + " appears twice", first.value_where[i]);
            }
        }
    }

    located_expr read_expr(const yaml_node& n, const std::string& what) {
        located_expr le;
        const std::string text = n.scalar(what);
        le.where = n.where();
        // Expression errors point at the character: find where the scalar's text starts on its line.
        if (le.where.line > 0 && size_t(le.where.line) <= m_lines.size()) {
            const std::string& line = m_lines[size_t(le.where.line - 1)];
            const size_t col = size_t(le.where.column - 1);
            const char c = col < line.size() ? line[col] : '\0';
            if (c == '"' || c == '\'') {
                le.where.column += 1;
                le.exact = true;
            } else if (c != '|' && c != '>') {
                le.exact = true;
            }
        }
        try {
            le.expr = expression::parse(text);
        } catch (const expr_error& e) {
            fail(what + ": " + e.what(), le.at(e.offset));
        }
        return le;
    }

    /// Every variable must be a parameter a point has (or, for metrics, something `known` accepts).
    void check_variables(const located_expr& le, const std::string& what,
                         const std::function<bool(const std::string&)>& known,
                         const std::vector<std::string>& candidates) {
        for (const std::string& v : le.expr.variables()) {
            if (known(v)) continue;
            size_t at = 0;
            const std::string& t = le.expr.text();
            // The first occurrence as a whole word.
            for (size_t p = t.find(v); p != std::string::npos; p = t.find(v, p + 1)) {
                const bool left = p == 0 || !(std::isalnum(static_cast<unsigned char>(t[p - 1])) || t[p - 1] == '_' ||
                                              t[p - 1] == '.');
                const size_t e = p + v.size();
                const bool right =
                    e >= t.size() || !(std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_' || t[e] == '.');
                if (left && right) {
                    at = p;
                    break;
                }
            }
            fail(std::string(what)
                     .append(": unknown name '")
                     .append(v)
                     .append("'")
                     .append(did_you_mean(v, candidates))
                     .append("; known: ")
                     .append(join(candidates)),
                 le.at(at));
        }
    }

    std::vector<std::string> param_names() const {
        std::vector<std::string> out;
        for (const char* k : {"platform", "workload", "program"})
            if (m_names.count(k) || !input_of(k).value.empty()) out.emplace_back(k);
        for (const auto& n : m_names)
            if (!is_input(n)) out.push_back(n);
        return out;
    }

    void read_derived() {
        const yaml_node n = m_root["derived"];
        if (!n.defined()) return;
        n.expect_map("derived");
        for (const auto& e : n.entries()) {
            if (is_input(e.key)) fail("derived: '" + e.key + "' cannot be computed; make it an axis", e.key_where);
            check_path(e.key, e.key_where, "derived parameter");
            derived_param d;
            d.name = e.key;
            d.where = e.key_where;
            const std::string what = "derived '" + e.key + "'";
            if (e.value.is_map()) {
                e.value.check_keys({"expr", "unit"}, what);
                if (!e.value.has("expr")) e.value.fail(what + ": needs expr");
                d.expr = read_expr(e.value["expr"], what);
                if (e.value.has("unit")) d.unit = e.value["unit"].scalar(what + " unit");
            } else {
                d.expr = read_expr(e.value, what);
            }
            const std::vector<std::string> known = param_names();
            check_variables(
                d.expr, what, [&](const std::string& v) { return std::count(known.begin(), known.end(), v) > 0; },
                known);
            declare(e.key, e.key_where, "parameter");
            m_spec.derived.push_back(std::move(d));
        }
    }

    void read_filters() {
        const yaml_node n = m_root["filter"];
        if (!n.defined()) return;
        std::vector<yaml_node> items = n.is_seq() ? n.items() : std::vector<yaml_node>{n};
        const std::vector<std::string> known = param_names();
        for (const yaml_node& item : items) {
            located_expr le = read_expr(item, "filter");
            check_variables(
                le, "filter", [&](const std::string& v) { return std::count(known.begin(), known.end(), v) > 0; },
                known);
            m_spec.filters.push_back(std::move(le));
        }
    }

    void read_metrics() {
        const yaml_node n = m_root["metrics"];
        std::vector<std::string> names;
        auto add = [&](metric m) {
            if (std::count(names.begin(), names.end(), m.name))
                fail("metrics: '" + m.name + "' is listed twice", m.where);
            if (m_names.count(m.name))
                fail("metrics: '" + m.name + "' is also a parameter of the sweep; name it differently", m.where);
            names.push_back(m.name);
            m_spec.metrics.push_back(std::move(m));
        };
        if (!n.defined()) {
            for (const auto& p : default_metrics()) add(metric{p, p, std::nullopt, m_root.where()});
            return;
        }
        n.expect_seq("metrics");
        if (n.size() == 0) n.fail("metrics: empty; leave it out for the default metrics");
        for (const yaml_node& item : n.items()) {
            metric m;
            m.where = item.where();
            if (item.is_map()) {
                item.check_keys({"name", "path", "expr"}, "metric");
                if (item.has("path") == item.has("expr"))
                    item.fail("metric: give either path (a summary.json value) or expr (a formula)");
                if (item.has("expr") && !item.has("name")) item.fail("metric: a formula needs a name");
                if (item.has("path")) m.path = item["path"].scalar("metric path");
                m.name = item.has("name") ? item["name"].scalar("metric name") : m.path;
                if (item.has("expr")) {
                    m.expr = read_expr(item["expr"], "metric '" + m.name + "'");
                    std::vector<std::string> candidates = names;
                    for (const auto& p : param_names()) candidates.push_back(p);
                    for (const auto& k : summary_keys()) candidates.push_back(k);
                    check_variables(
                        *m.expr, "metric '" + m.name + "'",
                        [&](const std::string& v) {
                            return std::count(names.begin(), names.end(), v) || m_names.count(v) ||
                                   summary_path_error(v).empty();
                        },
                        candidates);
                }
            } else {
                m.path = item.scalar("metric");
                m.name = m.path;
            }
            if (!m.path.empty()) {
                const std::string err = summary_path_error(m.path);
                if (!err.empty())
                    fail("metric '" + m.path + "': " + err, item.has("path") ? item["path"].where() : item.where());
            }
            add(std::move(m));
        }
    }

    void read_slurm() {
        const yaml_node n = m_root["slurm"];
        if (!n.defined()) return;
        n.expect_map("slurm");
        n.check_keys({"partition", "time", "cpus_per_task", "points_per_task", "max_parallel", "sbatch_args"}, "slurm");
        slurm_options& o = m_spec.slurm;
        if (n.has("partition")) o.partition = n["partition"].scalar("slurm partition");
        if (n.has("time")) o.time = n["time"].scalar("slurm time");
        auto positive = [&](const char* key, int& out, int min) {
            if (!n.has(key)) return;
            const std::int64_t v = n[key].as_int(std::string("slurm ") + key);
            if (v < min || v > 1000000)
                n[key].fail(std::string("slurm ") + key + ": expected a whole number from " + std::to_string(min));
            out = int(v);
        };
        positive("cpus_per_task", o.cpus_per_task, 1);
        positive("points_per_task", o.points_per_task, 1);
        positive("max_parallel", o.max_parallel, 0);
        if (n.has("sbatch_args")) {
            const yaml_node a = n["sbatch_args"];
            a.expect_seq("slurm sbatch_args");
            for (const yaml_node& item : a.items()) o.sbatch_args.push_back(item.scalar("slurm sbatch_args"));
        }
    }
};

std::string describe(const std::vector<param>& params) {
    std::string s;
    for (const auto& p : params) s += (s.empty() ? "" : " ") + p.name + "=" + p.value;
    return s;
}

}  // namespace

source_location located_expr::at(size_t offset) const {
    if (!exact) return where;
    source_location l = where;
    l.column += int(offset);
    return l;
}

source_location spec::where_of(const std::string& key, const std::string& value) const {
    for (const auto& a : axes)
        if (a.name == key)
            for (size_t i = 0; i < a.values.size(); ++i)
                if (a.values[i] == value) return a.value_where[i];
    for (size_t i = 0; i < sets.size(); ++i)
        if (sets[i].name == key) return set_where[i];
    return where_of(key);
}

source_location spec::where_of(const std::string& key) const {
    if (key == "platform" && platform_where.known()) return platform_where;
    if (key == "workload" && workload_where.known()) return workload_where;
    if (key == "program" && program_where.known()) return program_where;
    for (const auto& a : axes)
        if (a.name == key) return a.where;
    for (const auto& d : derived)
        if (d.name == key) return d.where;
    for (size_t i = 0; i < sets.size(); ++i)
        if (sets[i].name == key) return set_key_where[i];
    return axes_where;
}

std::vector<std::string> default_metrics() {
    return {"sim_time_s",       "throughput_per_s", "achieved_flops_per_s",
            "fraction_of_peak", "bound_by",         "physical_bound_s"};
}

spec load_spec(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error("cannot open sweep file '" + path + "': no such file or not readable");
    require_input_file(path, "sweep file");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_spec(ss.str(), path);
}

spec parse_spec(const std::string& text, const std::string& file) { return parser(text, file).parse(); }

expr_value param_value(const std::string& text) {
    try {
        return parse_quantity(text).value;
    } catch (const std::exception&) {
        return text;
    }
}

std::string format_value(double v) {
    char buf[64];
    if (std::isfinite(v) && std::fabs(v) < 1e15 && v == std::floor(v))
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.12g", v);
    return buf;
}

namespace {

double parse_duration_unchecked(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str()) {
        std::string unit(end);
        unit.erase(0, unit.find_first_not_of(' '));
        if (unit == "min") return v * 60;
        if (unit == "h") return v * 3600;
    }
    quantity q;
    try {
        q = parse_quantity(text);
    } catch (const input_error& e) {
        throw input_error("expected a duration such as 30s, 10min or 2h, got '" + text + "'");
    }
    if (q.dim == dimension::scalar) return q.value;  // plain seconds
    if (q.dim != dimension::time) throw input_error("expected a duration such as 30s, 10min or 2h, got '" + text + "'");
    return q.value;
}

}  // namespace

double parse_duration(const std::string& text) {
    const double v = parse_duration_unchecked(text);
    // 0 means no limit; a week per point is far past any sensible run (and keeps the clock arithmetic exact).
    if (!(v >= 0)) throw input_error("expected a duration of 0 (no limit) or more, got '" + text + "'");
    if (v > 604800) throw input_error("'" + text + "' is more than a week (604800 s); use 0 for no limit");
    return v;
}

std::string point_key(const std::string& platform, const std::string& workload, const std::string& program,
                      const std::vector<param>& sets) {
    std::vector<std::string> lines;
    lines.reserve(sets.size());
    for (const auto& p : sets) lines.push_back(p.name + '\x1f' + p.value);
    std::sort(lines.begin(), lines.end());
    std::string canon = "platform\x1f" + platform + "\nworkload\x1f" + workload + "\nprogram\x1f" + program + "\n";
    for (const auto& l : lines) canon += l + "\n";
    return fingerprint().add(canon).hex();
}

expansion expand(const spec& s) {
    expansion out;
    double total = 1;
    for (const auto& g : s.groups) total *= double(s.axes[g.front()].values.size());
    if (total > max_points)
        fail("the axes make " + format_value(total) + " combinations; more than " + format_value(max_points) +
                 " is surely a mistake (split the study into several sweeps)",
             s.axes_where);
    out.combinations = size_t(total);
    std::vector<size_t> pos(s.groups.size(), 0);
    std::unordered_map<std::string, size_t> seen;
    seen.reserve(out.combinations);
    out.points.reserve(out.combinations);
    const bool needs_scope = !s.derived.empty() || !s.filters.empty();
    for (size_t n = 0; n < out.combinations; ++n) {
        point p;
        p.platform = s.platform.value;
        p.workload = s.workload.value;
        p.program = s.program.value;
        std::vector<size_t> value_of(s.axes.size(), 0);
        for (size_t g = 0; g < s.groups.size(); ++g)
            for (size_t ax : s.groups[g]) value_of[ax] = pos[g];
        std::map<std::string, std::string> scope_values;  // only for derived values and filters
        for (const auto& f : s.sets) {
            p.sets.push_back(f);
            if (needs_scope) scope_values[f.name] = f.value;
        }
        for (size_t ax = 0; ax < s.axes.size(); ++ax) {
            const param v{s.axes[ax].name, s.axes[ax].values[value_of[ax]]};
            p.params.push_back(v);
            if (v.name == "platform")
                p.platform = v.value;
            else if (v.name == "workload")
                p.workload = v.value;
            else if (v.name == "program")
                p.program = v.value;
            else
                p.sets.push_back(v);
            if (needs_scope) scope_values[v.name] = v.value;
        }
        if (needs_scope) {
            scope_values["platform"] = p.platform;
            if (!p.workload.empty()) scope_values["workload"] = p.workload;
            if (!p.program.empty()) scope_values["program"] = p.program;
        }
        const expr_scope scope = [&](std::string_view name) -> std::optional<expr_value> {
            const auto it = scope_values.find(std::string(name));
            if (it == scope_values.end()) return std::nullopt;
            return param_value(it->second);
        };
        for (const auto& d : s.derived) {
            std::string text;
            try {
                const expr_value v = d.expr.expr.eval(scope);
                text = std::holds_alternative<double>(v) ? format_value(std::get<double>(v)) : std::get<std::string>(v);
            } catch (const expr_error& e) {
                fail("derived '" + d.name + "' at " + describe(p.params) + ": " + e.what(), d.expr.at(e.offset));
            }
            text += d.unit;
            p.params.push_back({d.name, text});
            p.sets.push_back({d.name, text});
            scope_values[d.name] = text;
        }
        bool keep = true;
        for (const auto& f : s.filters) {
            try {
                if (!f.expr.eval_bool(scope)) keep = false;
            } catch (const expr_error& e) {
                fail("filter at " + describe(p.params) + ": " + e.what(), f.at(e.offset));
            }
            if (!keep) break;
        }
        // Advance the odometer: the last group fastest, so the first axis is the outermost loop.
        for (size_t g = s.groups.size(); g-- > 0;) {
            if (++pos[g] < s.axes[s.groups[g].front()].values.size()) break;
            pos[g] = 0;
        }
        if (!keep) {
            ++out.filtered_out;
            continue;
        }
        p.key = point_key(p.platform, p.workload, p.program, p.sets);
        p.index = out.points.size();
        const auto [it, fresh] = seen.emplace(p.key, p.index);
        if (!fresh)
            fail("points " + std::to_string(it->second) + " (" + describe(out.points[it->second].params) + ") and " +
                     std::to_string(p.index) + " (" + describe(p.params) + ") are the same run; remove the repeat",
                 s.axes_where);
        out.points.push_back(std::move(p));
    }
    if (out.points.empty())
        fail("the filter removes every one of the " + std::to_string(out.combinations) + " combinations",
             s.filters.empty() ? s.axes_where : s.filters.front().where);
    return out;
}

}  // namespace tessel::sweep
