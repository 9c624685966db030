#include "engine/netlist/platform.h"

#include "models/core/checked.h"
#include "models/core/limits.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "models/core/expr.h"
#include "models/core/registry.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

namespace {

// An index expression's value: truncated toward zero like integer division ("n / 8" is n's node), and within
// int's range (a 20-digit index is an error, not a wrapped number).
int index_of(double v, const std::string& what, const source_location& where) {
    return checked_int(std::isfinite(v) ? std::trunc(v) : v, what, where);
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

std::vector<std::string> split_top(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (char c : s) {
        if (c == '(' || c == '[') ++depth;
        if (c == ')' || c == ']') --depth;
        if (c == sep && depth == 0) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    for (auto& p : out) {
        while (!p.empty() && std::isspace(static_cast<unsigned char>(p.back()))) p.pop_back();
        size_t b = 0;
        while (b < p.size() && std::isspace(static_cast<unsigned char>(p[b]))) ++b;
        p = p.substr(b);
    }
    return out;
}

std::string coords_str(const std::vector<int>& c) {
    std::string s = "[";
    for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
    return s + "]";
}

/// "'PATH': index 'EXPR'" (and ": WHY"), for an index of a part path that is not a valid index.
std::string index_error(const std::string& path, const std::string& expr, const std::string& why = {}) {
    std::string message = "'" + path + "': index '";
    message.append(expr).append("'");
    if (!why.empty()) message.append(": ").append(why);
    return message;
}

std::string grid_shape_str(const std::vector<int>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) s += (i ? " x " : "") + std::to_string(c[i]);
    return s;
}

/// The platform's `validation:` ("calibrated: ...", "checked: ...", "uncalibrated: ..."); a platform that states
/// none is uncalibrated as far as anyone can tell.
std::string read_validation(const yaml_node& root) {
    const yaml_node v = root["validation"];
    if (!v.defined()) return "uncalibrated: the platform file states no validation (validation:)";
    std::string text = v.scalar("validation");
    for (const char* status : {"calibrated: ", "checked: ", "uncalibrated: "})
        if (text.rfind(status, 0) == 0 && text.size() > std::string(status).size()) return text;
    v.fail(
        "validation must start with calibrated:, checked: or uncalibrated: and say on what (docs/platform-yaml.md), "
        "got '" +
        text + "'");
}

}  // namespace

platform::platform(const sc_core::sc_module_name& n, const yaml_node& root, param_context& ctx, sim_context& sim,
                   const std::string& config_prefix)
    : sc_core::sc_module(n), m_sim(sim), m_prefix(config_prefix), m_root(root) {
    m_file = root.file();
    root.expect_map("platform file");
    root.check_keys({"platform", "description", "validation", "clock", "quantum", "tdp", "parameters", "chips",
                     "components", "connections", "mapper", "parallel", "source", "notes"},
                    "platform file");
    m_title = root["platform"].scalar("platform (the platform's name)");
    if (root.has("description")) m_description = root["description"].scalar("description");
    m_validation = read_validation(root);

    auto top_value = [&](const std::string& key, const std::string& def) -> std::pair<std::string, source_location> {
        if (const auto* o = ctx.find_override(m_prefix + key))
            return {o->text, source_location{"--set " + m_prefix + key + "=" + o->text, 0, 0}};
        const yaml_node v = root[key];
        if (v.defined()) return {v.scalar(key), v.where()};
        return {def, source_location{m_file, 0, 0}};
    };
    // Platform parameters are variables for ${...} in component parameters; --set NAME=value overrides them.
    const yaml_node params = root["parameters"];
    if (params.defined()) {
        params.expect_map("parameters");
        for (const auto& e : params.entries()) {
            if (!is_identifier(e.key))
                throw input_error("parameter name '" + e.key + "' must be an identifier", e.key_where);
            const auto [text, where] = top_value_param(ctx, params, e);
            ctx.set_variable(e.key, ctx.substitute(text, where));
            ctx.record(m_prefix + e.key, ctx.variables().at(e.key));
            m_parameters.emplace_back(e.key, ctx.variables().at(e.key));
        }
    }
    {
        const auto [text, where] = top_value("clock", "");
        if (text.empty())
            throw input_error("platform file needs a 'clock:' (e.g. clock: 1GHz), the default clock of its components",
                              root.where());
        quantity q;
        std::string value;  // the clock with its ${...} substituted: components' ${clock} defaults use this text
        try {
            value = ctx.substitute(text, where);
            q = parse_quantity(value);
        } catch (const input_error& e) {
            throw input_error("clock: " + e.message(), where);
        }
        if (q.dim != dimension::frequency || q.value <= 0)
            throw input_error("clock: expected a frequency such as 1GHz, got '" + text + "'", where);
        if (const std::string why = clock_out_of_range(q.value); !why.empty())
            throw input_error("clock: " + why, where);
        m_clock.hz = q.value;
        ctx.set_variable("clock", value);
        ctx.record(m_prefix + "clock", value);
    }
    // A top-level quantity: its text (recorded in the resolved configuration), where it came from, its value.
    auto top_quantity = [&](const std::string& key, const std::string& def) {
        const auto [text, where] = top_value(key, def);
        quantity q;
        try {
            q = parse_quantity(ctx.substitute(text, where));
        } catch (const input_error& e) {
            throw input_error(key + ": " + e.message(), where);
        }
        ctx.record(m_prefix + key, text);
        return std::make_tuple(text, where, q);
    };
    {
        const auto [text, where, q] = top_quantity("quantum", "0ns");
        try {
            m_quantum = time_or_cycles(q, m_clock, "quantum", text, "a time such as 100ns or 64cycles");
        } catch (const input_error& e) {
            throw input_error(e.message(), where);
        }
    }
    if (root.has("tdp") || ctx.find_override(m_prefix + "tdp")) {
        const auto [text, where, q] = top_quantity("tdp", "0W");
        if (q.dim != dimension::power || q.value <= 0)
            throw input_error(
                "tdp: expected a power such as 700W (the chip's thermal design power), got '" + text + "'", where);
        m_tdp += q.value;  // a system adds its own (switches, hosts) to its chips'
    }
    if (root.has("chips")) {
        if (!m_prefix.empty())
            throw input_error("a chip of a system cannot have chips of its own", root["chips"].where());
        build_chips(root["chips"], ctx);
    }
    const yaml_node comps = root["components"];
    if (!comps.defined() && m_chip_groups.empty())
        throw input_error("platform file needs a 'components:' map", root.where());
    if (comps.defined()) build_components(comps, ctx);
    build_connections(root["connections"]);
    m_mapper = root["mapper"];
    m_parallel = root["parallel"];
    // Only the system mapper reads a parallel plan: on one chip it would be ignored without a word.
    if (m_parallel.defined() && !is_system())
        throw input_error(
            "'parallel:' sets how a system splits a model over its chips, but this platform is a single "
            "chip (no 'chips:' map); remove it, or run the model on a system (docs/systems.md)",
            m_parallel.where());
}

platform::~platform() = default;

std::pair<std::string, source_location> platform::top_value_param(param_context& ctx, const yaml_node& params,
                                                                  const yaml_node::entry& e) const {
    (void)params;
    const std::string key = m_prefix + e.key;
    if (const auto* o = ctx.find_override(key)) return {o->text, source_location{"--set " + key + "=" + o->text, 0, 0}};
    return {e.value.scalar("parameter '" + e.key + "'"), e.value.where()};
}

std::unique_ptr<platform> platform::load(const std::string& path, param_context& ctx, sim_context& sim) {
    const yaml_node root = yaml_node::load_file(path);
    root.expect_map("platform file");
    const yaml_node name = root["platform"];
    if (!name.defined())
        throw input_error("platform file needs a 'platform:' key with the platform's name", root.where());
    const std::string n = name.scalar("platform");
    if (!is_identifier(n))
        throw input_error("platform name '" + n + "' must be an identifier (letters, digits, _)", name.where());
    return std::make_unique<platform>(n.c_str(), root, ctx, sim);
}

namespace {
/// Modules one replicated component may have: beyond this a grid must be held as data (tile_array).
constexpr long long k_max_replicas = 65536;
/// Chips one system may instantiate (the largest published pods: TPU v4 4,096 chips; Selene 4,480 GPUs).
constexpr long long k_max_chips = 16384;

/// A `replicate:` map ({x: 4, y: 4}) into dimension names and extents; the product is checked against `limit`
/// before it can wrap.
void parse_replicate(const yaml_node& rep, const param_context& ctx, const std::string& what, long long limit,
                     const std::string& things, const std::string& advice, std::vector<std::string>& dims,
                     std::vector<int>& shape) {
    rep.expect_map("replicate (a map of dimension: count, e.g. {x: 4, y: 4})");
    long long total = 1;
    for (const auto& d : rep.entries()) {
        const std::string text = ctx.substitute(d.value.scalar("replicate." + d.key), d.value.where());
        double v = 0;
        try {
            v = parse_quantity(text).value;
        } catch (const input_error& err) {
            throw input_error("replicate." + d.key + ": " + err.message(), d.value.where());
        }
        if (v < 1 || v != std::floor(v))
            throw input_error("replicate." + d.key + ": expected a positive whole number, got '" + text + "'",
                              d.value.where());
        if (v > static_cast<double>(limit) || static_cast<double>(total) * v > static_cast<double>(limit)) {
            std::string message = what + " replicates more than " + std::to_string(limit) + " ";
            message.append(things).append(" (replicate.").append(d.key).append(" = ").append(text).append("); ");
            throw input_error(message + advice, d.value.where());
        }
        dims.push_back(d.key);
        shape.push_back(static_cast<int>(v));
        total *= static_cast<long long>(v);
    }
}

/// A chip platform named in a system: the path as given (relative to the system file's folder), with .yaml
/// added, or under an ancestor folder (so `gpu/a100_sxm` is found from platforms/systems/).
std::string find_chip_file(const std::string& name, const std::string& system_file, const source_location& where) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = fs::path(system_file).parent_path();
    std::vector<std::string> tried;
    for (fs::path d = dir;; d = d.parent_path()) {
        for (const fs::path& p : {d / name, d / (name + ".yaml")}) {
            tried.push_back(p.string());
            if (fs::is_regular_file(p, ec)) return p.string();
        }
        if (d.empty() || d == d.parent_path() || tried.size() > 16) break;
    }
    throw input_error("chip platform '" + name + "' not found (looked for " + tried[0] + ", " + tried[1] +
                          " and the same under the folders above)",
                      where);
}
}  // namespace

void platform::build_chips(const yaml_node& chips, param_context& ctx) {
    chips.expect_map("chips (a map of name: {platform: FILE, replicate: {...}})");
    long long total = 0;
    for (const auto& e : chips.entries()) {
        if (!is_identifier(e.key)) throw input_error("chip name '" + e.key + "' must be an identifier", e.key_where);
        const yaml_node& spec = e.value;
        spec.expect_map("chip '" + e.key + "'");
        spec.check_keys({"platform", "replicate", "params", "source", "notes"}, "chip '" + e.key + "'");
        if (!spec.has("platform"))
            throw input_error("chip '" + e.key + "' needs a 'platform:' (a chip platform file, e.g. gpu/a100_sxm)",
                              spec.where());
        chip_group g;
        g.name = e.key;
        g.where = e.key_where;
        g.file = find_chip_file(ctx.substitute(spec["platform"].scalar("platform"), spec["platform"].where()), m_file,
                                spec["platform"].where());
        if (spec.has("replicate"))
            parse_replicate(spec["replicate"], ctx, "chip '" + e.key + "'", k_max_chips, "chips",
                            "split the system, or describe one representative part of it", g.dims, g.shape);
        long long count = 1;
        for (int x : g.shape) count *= x;
        total += count;
        if (total > k_max_chips)
            throw input_error("the system has more than " + std::to_string(k_max_chips) + " chips", e.key_where);
        // `params:` sets parameters inside every chip of the group (paths relative to the chip, like --set
        // CHIP.PATH=V but weaker: a --set of the same path wins).
        const std::string prefix = e.key + ".";
        if (spec.has("params")) {
            spec["params"].expect_map(
                "chip params (a map of PATH: VALUE inside the chip, e.g. gpu.hbm.capacity: 40GB)");
            for (const auto& p : spec["params"].entries())
                if (!ctx.find_override(prefix + p.key))
                    ctx.add_override(prefix + p.key, ctx.substitute(p.value.scalar(p.key), p.value.where()));
        }
        const yaml_node chip_root = yaml_node::load_file(g.file);
        chip_root.expect_map("chip platform file");
        if (chip_root.has("chips"))
            throw input_error(
                "chip '" + e.key + "': " + g.file + " is a system itself; a chip must be a single-chip platform",
                spec["platform"].where());
        // A chip's variables (its parameters, ${clock}) are its own: the system's are restored after it.
        const std::map<std::string, std::string> saved = ctx.variables();
        for (long long i = 0; i < count; ++i) {
            std::vector<int> idx;
            long long rest = i;
            for (int x : g.shape) {
                idx.push_back(static_cast<int>(rest % x));
                rest /= x;
            }
            const std::string inst = g.shape.empty() ? e.key : e.key + coords_str(idx);
            const std::uint32_t first = static_cast<std::uint32_t>(m_sim.components().size());
            try {
                m_chips.push_back(std::make_unique<platform>(inst.c_str(), chip_root, ctx, m_sim, prefix));
            } catch (const input_error& err) {
                throw input_error("chip '" + inst + "' (" + g.file + "): " + err.message(), err.where());
            }
            ctx.replace_variables(saved);
            const platform& chip = *m_chips.back();
            m_tdp += chip.tdp_watts();
            const std::uint32_t n = static_cast<std::uint32_t>(m_sim.components().size()) - first;
            if (i == 0)
                g.components = n;
            else if (n != g.components)
                throw input_error("chip '" + inst + "' has " + std::to_string(n) + " components where chip 0 has " +
                                      std::to_string(g.components) +
                                      " (a chip's structure must not depend on its index)",
                                  e.key_where);
            g.chips.push_back(&chip);
            g.first.push_back(first);
            // The chip's own wiring is part of the system's topology.
            if (m_attach.size() < chip.m_attach.size()) m_attach.resize(chip.m_attach.size());
            for (size_t c = first; c < chip.m_attach.size(); ++c)
                if (!chip.m_attach[c].empty()) m_attach[c] = chip.m_attach[c];
            for (const bridge& b : chip.m_bridges) add_bridge(b);
        }
        m_chip_groups.push_back(std::move(g));
    }
}

const platform::chip_group* platform::find_chip_group(const std::string& name) const {
    for (const auto& g : m_chip_groups)
        if (g.name == name) return &g;
    return nullptr;
}

void platform::add_bridge(const bridge& b) {
    const size_t i = m_bridges.size();
    m_bridges.push_back(b);
    const std::uint32_t hi = std::max(b.a.net, b.b.net);
    if (m_net_bridges.size() <= hi) m_net_bridges.resize(hi + 1);
    m_net_bridges[b.a.net].push_back(i);
    if (b.b.net != b.a.net) m_net_bridges[b.b.net].push_back(i);
}

void platform::build_components(const yaml_node& comps, param_context& ctx) {
    comps.expect_map("components (a map of name: {kind: ..., params: ...})");
    std::set<std::string> seen;
    for (const auto& e : comps.entries()) {
        if (!is_identifier(e.key))
            throw input_error("component name '" + e.key + "' must be an identifier (letters, digits, _)", e.key_where);
        if (!seen.insert(e.key).second) throw input_error("component '" + e.key + "' is declared twice", e.key_where);
        const yaml_node& spec = e.value;
        spec.expect_map("component '" + e.key + "'");
        spec.check_keys({"kind", "params", "preset", "replicate", "source", "notes"}, "component '" + e.key + "'");
        const yaml_node kind_node = spec["kind"];
        if (!kind_node.defined()) throw input_error("component '" + e.key + "' needs a 'kind:'", spec.where());
        const std::string kind = kind_node.scalar("kind");
        const kind_info* k = &kind_registry::instance().require(kind, kind_node.where());
        const preset* pre =
            spec.has("preset") ? &k->require_preset(spec["preset"].scalar("preset"), spec["preset"].where()) : nullptr;
        group g;
        g.name = e.key;
        g.kind = kind;
        g.where = e.key_where;
        if (spec.has("replicate"))
            parse_replicate(spec["replicate"], ctx, "component '" + e.key + "'", k_max_replicas, "modules",
                            "large arrays must be data-oriented (use kind tile_array, or a component whose units form "
                            "the grid)",
                            g.dims, g.shape);
        component_args args;
        args.sim = &m_sim;
        args.kind = k;
        args.params = spec["params"];
        args.ctx = &ctx;
        args.config_path = m_prefix + e.key;
        args.preset = pre ? &pre->values : nullptr;
        args.where = e.key_where;
        const long long count = [&] {
            long long c = 1;
            for (int s : g.shape) c *= s;
            return c;
        }();
        for (long long i = 0; i < count; ++i) {
            std::vector<int> idx;
            long long rest = i;
            for (int s : g.shape) {
                idx.push_back(static_cast<int>(rest % s));
                rest /= s;
            }
            const std::string inst = g.shape.empty() ? e.key : e.key + coords_str(idx);
            args.index = idx;
            component* c = k->make(inst.c_str(), args);
            m_owned.emplace_back(c);
            g.ids.push_back(c->id());
            m_top.push_back(c->id());
        }
        m_groups.push_back(std::move(g));
    }
}

const platform::group* platform::find_group(const std::string& name) const {
    for (const auto& g : m_groups)
        if (g.name == name) return &g;
    return nullptr;
}

std::vector<const platform::group*> platform::groups_with(component::role r) const {
    std::vector<const group*> out;
    for (const auto& g : m_groups)
        if (comp(g.ids.front()).has_role(r)) out.push_back(&g);
    return out;
}

component& platform::comp(std::uint32_t id) { return *m_sim.components().at(id); }
const component& platform::comp(std::uint32_t id) const { return *m_sim.components().at(id); }
std::uint32_t platform::component_count() const { return static_cast<std::uint32_t>(m_sim.components().size()); }

interconnect& platform::net(std::uint32_t id) { return static_cast<interconnect&>(comp(id)); }
const interconnect& platform::net(std::uint32_t id) const { return static_cast<const interconnect&>(comp(id)); }

platform::parsed_side platform::parse_side(const std::string& text, const source_location& where) const {
    parsed_side s;
    size_t i = 0;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    s.name = text.substr(0, i);
    if (s.name.empty()) throw input_error("'" + text + "': expected a component name", where);
    int groups = 0;
    while (i < text.size() && text[i] == '[') {
        const size_t close = text.find(']', i);
        if (close == std::string::npos) throw input_error("'" + text + "': missing ']'", where);
        auto parts = split_top(text.substr(i + 1, close - i - 1), ',');
        (groups == 0 ? s.replica_idx : s.unit_idx) = parts;
        ++groups;
        i = close + 1;
        if (groups > 2) throw input_error("'" + text + "': at most two index groups (replica, then unit)", where);
    }
    if (i < text.size()) {
        if (text[i] != '.') throw input_error("'" + text + "': unexpected '" + text.substr(i) + "'", where);
        s.sub = text.substr(i + 1);
        // A unit of the part ("gpu.hbm[3]", as emitted programs name a part's channel).
        const size_t open = s.sub.find('[');
        if (open != std::string::npos && s.sub.back() == ']') {
            s.sub_idx = split_top(s.sub.substr(open + 1, s.sub.size() - open - 2), ',');
            s.sub.resize(open);
        }
        if (!is_identifier(s.sub)) throw input_error("'" + text + "': '" + s.sub + "' is not a part name", where);
    }
    return s;
}

void platform::build_connections(const yaml_node& conns) {
    if (!conns.defined()) return;
    conns.expect_seq("connections (a list of 'from -> to')");
    for (const auto& item : conns.items()) {
        std::string text;
        if (item.is_map()) {
            item.check_keys({"from", "to"}, "connection");
            text = item["from"].scalar("from") + " -> " + item["to"].scalar("to");
        } else {
            text = item.scalar("connection");
        }
        connect(text, item.where());
    }
}

std::optional<platform::chip_side> platform::parse_chip_side(const std::string& text,
                                                             const source_location& where) const {
    size_t i = 0;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    const chip_group* g = find_chip_group(text.substr(0, i));
    if (!g) return std::nullopt;
    chip_side s;
    s.g = g;
    if (i < text.size() && text[i] == '[') {
        const size_t close = text.find(']', i);
        if (close == std::string::npos) throw input_error("'" + text + "': missing ']'", where);
        s.idx = split_top(text.substr(i + 1, close - i - 1), ',');
        i = close + 1;
    }
    if (s.idx.size() != g->shape.size())
        throw input_error("'" + text + "': chip '" + g->name + "' is " +
                              (g->shape.empty() ? std::string("a single chip; name it without an index")
                                                : "a " + grid_shape_str(g->shape) + " grid of chips; index it with " +
                                                      std::to_string(g->shape.size()) + " values, e.g. " + g->name +
                                                      "[" + join(g->dims) + "]"),
                          where);
    if (i >= text.size() || text[i] != '.' || i + 1 >= text.size())
        throw input_error(
            "'" + text + "': name a component inside the chip, e.g. " + g->name + (g->shape.empty() ? "" : "[0]") +
                "." + std::string(g->chips.front()->groups().empty() ? "gpu" : g->chips.front()->groups().front().name),
            where);
    s.inner = text.substr(i + 1);
    return s;
}

const platform& platform::chip_at(const chip_side& s, const std::vector<int>& idx, const std::string& text,
                                  const source_location& where) const {
    long long flat = 0, stride = 1;
    for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= s.g->shape[i])
            throw input_error("'" + text + "': " + s.g->name + coords_str(idx) + " is outside its " +
                                  grid_shape_str(s.g->shape) + " grid of chips",
                              where);
        flat += idx[i] * stride;
        stride *= s.g->shape[i];
    }
    return *s.g->chips[static_cast<size_t>(flat)];
}

namespace {

/// s without leading and trailing white space.
std::string trim_space(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    return s.substr(b);
}

/// The loop variables of a connection line (bare names among its indices, each over its dimension's extent) and
/// its index texts evaluated at their current values.
class connection_loops {
public:
    connection_loops(const std::vector<std::pair<std::string, std::string>>& parameters, const std::string& text,
                     const source_location& where)
        : m_parameters(parameters), m_text(text), m_where(where) {}

    /// Makes the bare names among idx loop variables over the matching extents (each name once).
    void collect(const std::vector<std::string>& idx, const std::vector<int>& extent) {
        for (size_t i = 0; i < idx.size() && i < extent.size(); ++i)
            if (is_identifier(idx[i])) {
                bool dup = false;
                for (const auto& v : m_vars) dup = dup || v.name == idx[i];
                if (!dup) m_vars.push_back({idx[i], extent[i]});
            }
    }

    /// How many combinations of values the variables take.
    long long combos() const {
        long long combos = 1;
        for (const auto& v : m_vars) combos *= v.extent;
        return combos;
    }

    /// Sets the variables to combination c, the first varying fastest.
    void select(long long c) {
        m_val.resize(m_vars.size(), 0);
        long long rest = c;
        for (size_t i = 0; i < m_vars.size(); ++i) {
            m_val[i] = static_cast<int>(rest % m_vars[i].extent);
            rest /= m_vars[i].extent;
        }
    }

    /// The index texts' values. Each text is parsed once and evaluated per loop value (a wafer connects 745,500
    /// PEs by one line); a bare loop variable is its value. Expressions see the loop variables and the platform's
    /// numeric parameters ("(n // 16 + 1) % z").
    std::vector<int> eval(const std::vector<std::string>& idx) {
        auto scope = [this](std::string_view n) -> std::optional<expr_value> {
            for (size_t i = 0; i < m_vars.size(); ++i)
                if (m_vars[i].name == n) return static_cast<double>(m_val[i]);
            for (const auto& [name, text] : m_parameters)
                if (name == n) {
                    char* end = nullptr;
                    const double v = std::strtod(text.c_str(), &end);
                    if (end != text.c_str() && *end == '\0') return v;
                }
            return std::nullopt;
        };
        std::vector<int> out;
        out.reserve(idx.size());
        for (const auto& e : idx) {
            size_t var = 0;
            while (var < m_vars.size() && m_vars[var].name != e) ++var;
            if (var < m_vars.size()) {
                out.push_back(m_val[var]);
                continue;
            }
            try {
                auto it = m_parsed.find(e);
                if (it == m_parsed.end()) it = m_parsed.emplace(e, expression::parse(e)).first;
                const double v = it->second.eval_number(scope);
                const bool plain =
                    std::fabs(v) < 2147483647.0 && v == std::trunc(v);  // the usual case: no message built
                out.push_back(plain ? static_cast<int>(v)
                                    : index_of(v, "connection '" + m_text + "': index '" + e + "'", m_where));
            } catch (const expr_error& err) {
                throw input_error("connection '" + m_text + "': index '" + e + "': " + err.what(), m_where);
            }
        }
        return out;
    }

private:
    struct loop_var {
        std::string name;
        int extent;
    };
    const std::vector<std::pair<std::string, std::string>>& m_parameters;
    const std::string& m_text;
    const source_location& m_where;
    std::vector<loop_var> m_vars;
    std::vector<int> m_val;
    std::map<std::string, expression> m_parsed;
};

}  // namespace

void platform::connect(const std::string& text, const source_location& where) {
    const size_t arrow = text.find("->");
    if (arrow == std::string::npos)
        throw input_error("connection '" + text + "': expected 'from -> to', e.g. 'tile[x,y] -> noc[x,y]'", where);
    // A side: a component of this platform (`tile[x,y]`, `noc[3,0]`) or one inside a chip of a system
    // (`gpu[n].gpu`, `ipu[i].exchange[1]`). Bare names among the indices are loop variables over that
    // dimension's extent.
    struct side {
        std::optional<chip_side> chip;
        const platform* plat = nullptr;  // the platform `s` is read in (this one, or chip 0 of the chip group)
        parsed_side s;
        const group* g = nullptr;
        std::vector<std::string> rep_idx, unit_idx;  // replica and unit index texts
    };
    auto read_side = [&](const std::string& raw) {
        side d;
        const std::string t = trim_space(raw);
        d.chip = parse_chip_side(t, where);
        d.plat = d.chip ? d.chip->g->chips.front() : this;
        d.s = d.plat->parse_side(d.chip ? d.chip->inner : t, where);
        d.g = d.plat->find_group(d.s.name);
        if (!d.g) {
            std::vector<std::string> names;
            for (const auto& gg : d.plat->m_groups) names.push_back(gg.name);
            if (!d.chip)
                for (const auto& cg : m_chip_groups) names.push_back(cg.name);
            throw input_error(
                "connection '" + text + "': no component named '" + d.s.name + "'" +
                    (d.chip ? " in chip '" + d.chip->g->name + "' (" + d.plat->file() + ")" : std::string()) +
                    did_you_mean(d.s.name, names) + "; components: " + join(names),
                where);
        }
        if (!d.s.sub.empty())
            throw input_error("connection '" + text + "': connect whole components (a tile attaches with its parts)",
                              where);
        const bool rep = !d.g->shape.empty();
        d.rep_idx = rep ? d.s.replica_idx : std::vector<std::string>{};
        d.unit_idx = rep ? d.s.unit_idx : d.s.replica_idx;
        if (rep && d.rep_idx.size() != d.g->shape.size())
            throw input_error("connection '" + text + "': '" + d.s.name + "' is a " + grid_shape_str(d.g->shape) +
                                  " grid; index it with " + std::to_string(d.g->shape.size()) + " values, e.g. " +
                                  d.s.name + "[" + join(d.g->dims) + "]",
                              where);
        return d;
    };
    const side left = read_side(text.substr(0, arrow)), right = read_side(text.substr(arrow + 2));
    if (!comp(right.g->ids.front()).has_role(component::role::interconnect))
        throw input_error("connection '" + text + "': '" + right.s.name + "' (" + right.g->kind +
                              ") is not a network; the right side names a network port, e.g. noc[x,y]",
                          where);
    const std::vector<int> l_units = left.plat->comp(left.g->ids.front()).unit_shape();
    if (!left.unit_idx.empty() && left.unit_idx.size() != l_units.size())
        throw input_error("connection '" + text + "': '" + left.s.name + "' has " +
                              (l_units.empty() ? std::string("a single unit") : grid_shape_str(l_units) + " units") +
                              "; its unit index needs " + std::to_string(l_units.size()) + " values",
                          where);

    connection_loops loops(m_parameters, text, where);
    if (left.chip) loops.collect(left.chip->idx, left.chip->g->shape);
    loops.collect(left.rep_idx, left.g->shape);
    loops.collect(left.unit_idx, l_units);
    auto eval_idx = [&loops](const std::vector<std::string>& idx) { return loops.eval(idx); };
    // The component a side names for the current loop values (in its chip when it has one).
    auto component_of = [&](const side& d) -> std::pair<const platform*, std::uint32_t> {
        const platform* p = d.chip ? &chip_at(*d.chip, eval_idx(d.chip->idx), text, where) : this;
        const group& g = d.chip ? *p->find_group(d.s.name) : *d.g;
        if (g.shape.empty()) return {p, g.ids.front()};
        const std::vector<int> ri = eval_idx(d.rep_idx);
        long long flat = 0, stride = 1;
        for (size_t i = 0; i < ri.size(); ++i) {
            if (ri[i] < 0 || ri[i] >= g.shape[i])
                throw input_error("connection '" + text + "': " + d.s.name + coords_str(ri) + " is outside its " +
                                      grid_shape_str(g.shape) + " grid",
                                  where);
            flat += ri[i] * stride;
            stride *= g.shape[i];
        }
        return {p, g.ids[static_cast<size_t>(flat)]};
    };

    const long long combos = loops.combos();
    for (long long c = 0; c < combos; ++c) {
        loops.select(c);
        // Left: a component (and unit, or all units).
        const std::uint32_t lc = component_of(left).second;
        component& lcomp = comp(lc);
        int lunit = -1;  // all units
        if (!left.unit_idx.empty()) {
            const std::vector<int> ui = eval_idx(left.unit_idx);
            lunit = lcomp.unit_at(ui);
            if (lunit < 0)
                throw input_error("connection '" + text + "': unit " + coords_str(ui) + " is outside " + left.s.name +
                                      "'s " + grid_shape_str(l_units) + " units",
                                  where);
        }
        // Right: a network port.
        const std::uint32_t rc = component_of(right).second;
        if (!comp(rc).has_role(component::role::interconnect))
            throw input_error("connection '" + text + "': '" + right.s.name + "' (" + right.g->kind +
                                  ") is not a network; the right side names a network port, e.g. noc[x,y]",
                              where);
        interconnect& rnet = net(rc);
        if (right.unit_idx.empty())
            throw input_error("connection '" + text + "': name the port of '" + right.s.name + "', e.g. " +
                                  right.s.name + "[" + std::string(rnet.port_shape().size() == 2 ? "0,0" : "0") + "]",
                              where);
        const std::vector<int> pi = eval_idx(right.unit_idx);
        const int port = rnet.unit_at(pi);
        if (port < 0)
            throw input_error("connection '" + text + "': port " + coords_str(pi) + " is outside " + right.s.name +
                                  "'s " + grid_shape_str(rnet.port_shape()) + " ports",
                              where);
        const attach_point ap{rc, static_cast<std::uint32_t>(port)};
        if (lcomp.has_role(component::role::interconnect)) {
            if (lunit < 0)
                throw input_error("connection '" + text + "': name the port of network '" + left.s.name + "'", where);
            // A network's ports already reach each other inside it: a link from it to itself is a wiring mistake.
            if (lc == rc)
                throw input_error(
                    "connection '" + text + "': joins " + left.s.name +
                        (static_cast<int>(lunit) == port
                             ? "'s port " + std::to_string(port) + " to itself"
                             : " to itself (ports " + std::to_string(lunit) + " and " + std::to_string(port) + ")") +
                        "; a connection joins a component to a network, or two networks",
                    where);
            add_bridge({attach_point{lc, static_cast<std::uint32_t>(lunit)}, ap});
            continue;
        }
        if (m_attach.size() <= lc) m_attach.resize(lc + 1);
        auto& slots = m_attach[lc];
        const size_t units = lcomp.unit_count();
        if (slots.empty()) slots.assign(lunit < 0 ? 1 : units, attach_point{});
        if (lunit < 0) {
            if (slots.size() != 1 || slots[0].valid())
                throw input_error("connection '" + text + "': " + lcomp.path() + " is already connected", where);
            slots[0] = ap;
        } else {
            if (slots.size() == 1 && units > 1) slots.assign(units, slots[0]);
            if (slots[static_cast<size_t>(lunit)].valid() && slots.size() > 1)
                throw input_error("connection '" + text + "': " + left.s.name +
                                      lcomp.unit_suffix(static_cast<std::uint32_t>(lunit)) + " is already connected",
                                  where);
            slots[static_cast<size_t>(lunit)] = ap;
        }
    }
}

attach_point platform::owner_attachment(std::uint32_t c) const {
    const component& k = comp(c);
    if (k.owner()) return attachment(k.owner()->id(), 0);
    return attach_point{};
}

void platform::cached_route_into(const attach_point& from, const attach_point& to,
                                 std::vector<route_segment>& out) const {
    auto it = m_routes.find({from.net, to.net});
    if (it == m_routes.end()) it = m_routes.emplace(std::make_pair(from.net, to.net), route(from, to)).first;
    out = it->second;
    out.front().in = from.port;
    out.back().out = to.port;
}

std::vector<route_segment> platform::route(const attach_point& from, const attach_point& to) const {
    if (from.net == to.net) return {route_segment{from.net, from.port, to.port}};
    // Breadth-first over networks joined by bridges; the first bridge found per network wins (stable order).
    struct prev_t {
        std::uint32_t net;
        size_t bridge;
        bool forward;
    };
    std::map<std::uint32_t, prev_t> prev;
    std::deque<std::uint32_t> q{from.net};
    prev[from.net] = {from.net, ~size_t{0}, true};
    while (!q.empty() && !prev.count(to.net)) {
        const std::uint32_t n = q.front();
        q.pop_front();
        if (n >= m_net_bridges.size()) continue;
        for (size_t b : m_net_bridges[n]) {
            const bridge& br = m_bridges[b];
            if (br.a.net == n && !prev.count(br.b.net)) {
                prev[br.b.net] = {n, b, true};
                q.push_back(br.b.net);
            } else if (br.b.net == n && !prev.count(br.a.net)) {
                prev[br.a.net] = {n, b, false};
                q.push_back(br.a.net);
            }
        }
    }
    if (!prev.count(to.net))
        throw input_error("no route from " + comp(from.net).path() + " to " + comp(to.net).path() +
                          ": the networks are not connected (add a chip_link between them)");
    std::vector<route_segment> rev;
    std::uint32_t cur = to.net, port_out = to.port;
    while (cur != from.net) {
        const prev_t p = prev[cur];
        const bridge& br = m_bridges[p.bridge];
        const attach_point here = p.forward ? br.b : br.a, there = p.forward ? br.a : br.b;
        rev.push_back({cur, here.port, port_out});
        cur = p.net;
        port_out = there.port;
    }
    rev.push_back({from.net, from.port, port_out});
    std::reverse(rev.begin(), rev.end());
    return rev;
}

endpoint platform::resolve(const std::string& path, const source_location& where) const {
    if (const auto cs = parse_chip_side(path, where)) {
        std::vector<int> idx;
        for (const auto& e : cs->idx) {
            try {
                idx.push_back(index_of(expression::parse(e).eval_number(nullptr), index_error(path, e), where));
            } catch (const expr_error& err) {
                throw input_error(index_error(path, e, err.what()), where);
            }
        }
        return chip_at(*cs, idx, path, where).resolve(cs->inner, where);
    }
    const parsed_side s = parse_side(path, where);
    const group* g = find_group(s.name);
    if (!g) {
        std::vector<std::string> names;
        for (const auto& gg : m_groups) names.push_back(gg.name);
        for (const auto& cg : m_chip_groups) names.push_back(cg.name);
        throw input_error("'" + path + "': no component named '" + s.name + "'" + did_you_mean(s.name, names) +
                              "; components: " + join(names),
                          where);
    }
    auto numbers = [&](const std::vector<std::string>& idx) {
        std::vector<int> out;
        for (const auto& e : idx) {
            try {
                out.push_back(index_of(expression::parse(e).eval_number(nullptr), index_error(path, e), where));
            } catch (const expr_error& err) {
                throw input_error(index_error(path, e, err.what()), where);
            }
        }
        return out;
    };
    endpoint ep;
    ep.comp = g->ids.front();
    std::vector<std::string> unit_idx = s.replica_idx;
    if (!g->shape.empty()) {
        if (s.replica_idx.size() != g->shape.size())
            throw input_error("'" + path + "': '" + g->name + "' is a " + grid_shape_str(g->shape) +
                                  " grid; name one, e.g. " + g->name + "[" +
                                  std::string(g->shape.size() == 2 ? "0,0" : "0") + "]",
                              where);
        const std::vector<int> ri = numbers(s.replica_idx);
        long long flat = 0, stride = 1;
        for (size_t i = 0; i < ri.size(); ++i) {
            if (ri[i] < 0 || ri[i] >= g->shape[i])
                throw input_error(
                    "'" + path + "': outside the " + grid_shape_str(g->shape) + " grid of '" + g->name + "'", where);
            flat += ri[i] * stride;
            stride *= g->shape[i];
        }
        ep.comp = g->ids[static_cast<size_t>(flat)];
        unit_idx = s.unit_idx;
    }
    const component* c = &comp(ep.comp);
    if (!s.sub.empty()) {
        auto* obj = sc_core::sc_find_object((c->path() + "." + s.sub).c_str());
        auto* part = dynamic_cast<component*>(obj);
        if (!part) {
            std::vector<std::string> parts;
            for (auto* ch : c->get_child_objects())
                if (dynamic_cast<component*>(ch)) parts.emplace_back(ch->basename());
            throw input_error("'" + path + "': " + c->path() + " has no part '" + s.sub + "'" +
                                  (parts.empty() ? std::string(" (it has no parts)") : "; parts: " + join(parts)),
                              where);
        }
        c = part;
        ep.comp = part->id();
        if (!s.sub_idx.empty()) {
            if (!unit_idx.empty())
                throw input_error(
                    "'" + path + "': name the unit of " + s.name + " or of its part '" + s.sub + "', not both", where);
            unit_idx = s.sub_idx;
        }
    }
    const std::vector<int> shape = c->unit_shape();
    if (!unit_idx.empty()) {
        const std::vector<int> ui = numbers(unit_idx);
        ep.unit = c->unit_at(ui);
        if (ep.unit < 0)
            throw input_error("'" + path + "': unit " + coords_str(ui) + " is outside " + c->path() + "'s " +
                                  (shape.empty() ? std::string("single unit") : grid_shape_str(shape) + " units"),
                              where);
    } else if (!shape.empty() && c->unit_count() > 1) {
        if (!c->has_role(component::role::memory) || c->has_role(component::role::compute))
            throw input_error("'" + path + "': " + c->path() + " has " + grid_shape_str(shape) +
                                  " units; name one, e.g. " + s.name + "[" +
                                  std::string(shape.size() == 2 ? "0,0" : "0") + "]",
                              where);
        ep.unit = -1;  // a memory spread over its units by address
    }
    return ep;
}

std::string platform::name_of(const endpoint& e) const {
    const component& c = comp(e.comp);
    std::string n = c.path();
    const std::string prefix = std::string(name()) + ".";
    if (n.rfind(prefix, 0) == 0) n = n.substr(prefix.size());
    if (e.unit >= 0 && c.unit_count() > 1) n += c.unit_suffix(static_cast<std::uint32_t>(e.unit));
    return n;
}

std::string platform::resolved_yaml(const param_context& ctx) const {
    std::ostringstream os;
    os << "# Resolved configuration of platform '" << m_title << "'\n"
       << "# Every parameter's final value (YAML, presets, defaults and --set applied); each line works as --set.\n";
    os << "platform: " << m_title << "\n";
    for (const auto& [path, value] : ctx.resolved()) {
        YAML::Emitter e;
        e << YAML::DoubleQuoted << value;
        os << path << ": " << e.c_str() << "\n";
    }
    return os.str();
}

}  // namespace tessel
