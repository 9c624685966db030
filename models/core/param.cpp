#include "models/core/param.h"

#include "models/core/checked.h"
#include "models/core/limits.h"

#include <cmath>

#include "models/core/expr.h"

namespace tessel {

const char* param_type_name(param_type t) {
    switch (t) {
        case param_type::integer:
            return "integer";
        case param_type::real:
            return "real";
        case param_type::boolean:
            return "bool";
        case param_type::text:
            return "text";
        case param_type::choice:
            return "choice";
        case param_type::time:
            return "time";
        case param_type::frequency:
            return "frequency";
        case param_type::size:
            return "size";
        case param_type::bandwidth:
            return "bandwidth";
        case param_type::rate_table:
            return "rate table";
        case param_type::energy:
            return "energy";
        case param_type::power:
            return "power";
        case param_type::energy_per_byte:
            return "energy per byte";
        case param_type::energy_table:
            return "energy table";
        case param_type::group:
            return "group";
    }
    return "?";
}

double rate_table::at(dtype t) const {
    const auto it = by_type.find(t);
    return it == by_type.end() ? 0.0 : it->second;
}

double energy_table::at(dtype t) const {
    const auto it = by_type.find(t);
    return it == by_type.end() ? 0.0 : it->second;
}

// ---- param_context ---------------------------------------------------------------------------------------

void param_context::add_override(const std::string& path, const std::string& value) {
    m_overrides[path] = {value, false};
}

const param_context::override_value* param_context::find_override(const std::string& path) const {
    const auto it = m_overrides.find(path);
    if (it == m_overrides.end()) return nullptr;
    it->second.used = true;
    return &it->second;
}

namespace {

bool same_map(const yaml_node& a, const yaml_node& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    return a.raw().is(b.raw());
}

}  // namespace

const void* param_context::find_read(const params_read& r) const {
    const auto it = m_reads.find(r.path);
    if (it == m_reads.end()) return nullptr;
    for (const kept_read& k : it->second)
        if (k.read.type == r.type && k.read.preset == r.preset && k.read.part == r.part &&
            same_map(k.read.node, r.node) && k.variables == m_variables)
            return k.value.get();
    return nullptr;
}

void param_context::keep_read(const params_read& r, std::shared_ptr<const void> value) {
    std::vector<kept_read>& at = m_reads[r.path];
    at.push_back({r, m_variables, std::move(value)});
}

std::vector<std::string> param_context::unused_overrides() const {
    std::vector<std::string> out;
    for (const auto& [path, v] : m_overrides)
        if (!v.used) out.push_back(path);
    return out;
}

std::string param_context::substitute(const std::string& text, const source_location& where) const {
    if (text.find("${") == std::string::npos) return text;
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t open = text.find("${", pos);
        if (open == std::string::npos) {
            out += text.substr(pos);
            break;
        }
        out += text.substr(pos, open - pos);
        const size_t close = text.find('}', open);
        if (close == std::string::npos) throw input_error("unterminated ${ in '" + text + "'", where);
        const std::string inner = text.substr(open + 2, close - open - 2);
        const auto var = m_variables.find(inner);
        if (var != m_variables.end()) {
            out += var->second;  // a lone variable keeps its text and unit ("32B/cycle")
        } else {
            try {
                const expression e = expression::parse(inner);
                const expr_value v = e.eval([this](std::string_view name) -> std::optional<expr_value> {
                    const auto it = m_variables.find(std::string(name));
                    if (it == m_variables.end()) return std::nullopt;
                    try {
                        return parse_quantity(it->second).value;
                    } catch (const input_error&) {
                        return it->second;
                    }
                });
                out += expr_value_str(v);
            } catch (const expr_error& e) {
                std::vector<std::string> names;
                for (const auto& [k, _] : m_variables) names.push_back(k);
                throw input_error(std::string("in '${") + inner + "}': " + e.what() +
                                      (names.empty() ? "" : " (platform parameters: " + join(names) + ")"),
                                  where);
            }
        }
        pos = close + 1;
    }
    return out;
}

void param_context::record(const std::string& path, const std::string& value) {
    const auto it = m_resolved_index.find(path);
    if (it != m_resolved_index.end()) {
        m_resolved[it->second].second = value;
        return;
    }
    m_resolved_index[path] = m_resolved.size();
    m_resolved.emplace_back(path, value);
}

// ---- param_decl ------------------------------------------------------------------------------------------

param_decl::param_decl(std::vector<param_spec>* out, std::string prefix) : m_specs(out), m_prefix(std::move(prefix)) {}

param_decl::param_decl(const yaml_node& node, param_context* ctx, std::string path, std::string what)
    : m_node(node), m_ctx(ctx), m_path(std::move(path)), m_what(std::move(what)) {
    if (m_node.defined()) m_node.expect_map("parameters of " + m_what);
}

bool param_decl::declare_only(std::string_view name, param_type type, std::string_view def, std::string_view desc,
                              std::vector<std::string> choices) {
    if (!describing()) return false;
    param_spec s;
    s.name = m_prefix + std::string(name);
    s.type = type;
    s.is_required = def == required;
    if (!s.is_required) s.default_text = std::string(def);
    s.desc = std::string(desc);
    s.choices = std::move(choices);
    m_specs->push_back(std::move(s));
    return true;
}

param_decl::raw_value param_decl::fetch(std::string_view name, param_type type, std::string_view def,
                                        std::string_view desc) {
    raw_value v;
    if (describing()) {
        // Required parameters and defaults that refer to platform values (${clock}) have no value to check.
        if (def == required || def.find("${") != std::string_view::npos) return v;
        v.text = std::string(def);
        v.where.file = "default of '" + m_prefix + std::string(name) + "'";
        v.present = true;
        return v;
    }
    m_known.emplace_back(name);
    const std::string full = m_path + "." + std::string(name);
    if (m_ctx) {
        if (const auto* o = m_ctx->find_override(full)) {
            v.text = o->text;
            v.where.file = "--set " + full + "=" + o->text;
            v.from_override = true;
            v.present = true;
        }
    }
    if (!v.present) {
        const yaml_node n = m_node[name];
        if (n.defined()) {
            v.text = n.scalar("parameter '" + std::string(name) + "' of " + m_what);
            v.where = n.where();
            v.present = true;
        }
    }
    if (!v.present && m_preset) {
        const std::string key = m_preset_prefix + std::string(name);
        for (const auto& [k, val] : *m_preset)
            if (k == key) {
                v.text = val;
                v.where.file = "preset value of " + full;
                v.present = true;
            }
    }
    if (!v.present) {
        if (def == required)
            throw input_error("missing required parameter '" + std::string(name) + "' of " + m_what + " (" +
                                  param_type_name(type) + ": " + std::string(desc) + ")",
                              m_node.defined() ? m_node.where() : source_location{});
        v.text = std::string(def);
        v.where.file = "default of " + full;
        v.present = true;
    }
    if (m_ctx) {
        v.text = m_ctx->substitute(v.text, v.where);
        m_ctx->record(full, v.text);
    }
    return v;
}

void param_decl::bad(const raw_value& v, std::string_view name, const std::string& msg) const {
    throw input_error("parameter '" + std::string(name) + "' of " + (m_what.empty() ? m_prefix : m_what) + ": " + msg,
                      v.where);
}

quantity param_decl::parse(const raw_value& v, std::string_view name, std::initializer_list<dimension> dims,
                           std::string_view example) const {
    quantity q;
    try {
        q = parse_quantity(v.text);
    } catch (const input_error& e) {
        bad(v, name, e.message());
    }
    for (dimension d : dims)
        if (q.dim == d) return q;
    std::string expected;
    for (dimension d : dims) expected += std::string(expected.empty() ? "" : " or ") + dimension_name(d);
    auto article = [](const std::string& noun) {
        return std::string(noun.find_first_of("aeiou") == 0 ? "an " : "a ") + noun;
    };
    bad(v, name,
        "expected " + article(expected) + " (e.g. " + std::string(example) + "), got '" + v.text + "' (" +
            article(dimension_name(q.dim)) + ")");
}

void param_decl::check_bound(double x, bound b, const raw_value& raw, std::string_view name) const {
    if (b == bound::positive && !(x > 0)) bad(raw, name, "must be greater than zero, got '" + raw.text + "'");
    if (b == bound::non_negative && x < 0) bad(raw, name, "must not be negative, got '" + raw.text + "'");
}

void param_decl::operator()(std::int64_t& f, std::string_view name, std::string_view def, std::string_view desc,
                            bound b, std::int64_t most) {
    declare_only(name, param_type::integer, def, desc);
    const raw_value v = fetch(name, param_type::integer, def, desc);
    if (!v.present) return;
    const quantity q = parse(v, name, {dimension::scalar}, "16");
    if (std::floor(q.value) != q.value) bad(v, name, "expected a whole number, got '" + v.text + "'");
    check_bound(q.value, b, v, name);
    if (std::fabs(q.value) > static_cast<double>(most))
        bad(v, name, "must be at most " + std::to_string(most) + ", got '" + v.text + "'");
    f = static_cast<std::int64_t>(q.value);
}

void param_decl::operator()(double& f, std::string_view name, std::string_view def, std::string_view desc, bound b) {
    declare_only(name, param_type::real, def, desc);
    const raw_value v = fetch(name, param_type::real, def, desc);
    if (!v.present) return;
    const quantity q = parse(v, name, {dimension::scalar}, "0.85");
    check_bound(q.value, b, v, name);
    f = q.value;
}

void param_decl::operator()(bool& f, std::string_view name, std::string_view def, std::string_view desc) {
    declare_only(name, param_type::boolean, def, desc);
    const raw_value v = fetch(name, param_type::boolean, def, desc);
    if (!v.present) return;
    if (v.text == "true" || v.text == "yes" || v.text == "on")
        f = true;
    else if (v.text == "false" || v.text == "no" || v.text == "off")
        f = false;
    else
        bad(v, name, "expected true or false, got '" + v.text + "'");
}

void param_decl::operator()(std::string& f, std::string_view name, std::string_view def, std::string_view desc) {
    declare_only(name, param_type::text, def, desc);
    const raw_value v = fetch(name, param_type::text, def, desc);
    if (v.present) f = v.text;
}

void param_decl::choice(std::string& f, std::string_view name, std::string_view def,
                        const std::vector<std::string>& choices, std::string_view desc) {
    declare_only(name, param_type::choice, def, desc, choices);
    const raw_value v = fetch(name, param_type::choice, def, desc);
    if (!v.present) return;
    for (const auto& c : choices)
        if (c == v.text) {
            f = v.text;
            return;
        }
    bad(v, name, "'" + v.text + "' is not one of: " + join(choices) + did_you_mean(v.text, choices));
}

void param_decl::operator()(duration& f, std::string_view name, std::string_view def, std::string_view desc) {
    declare_only(name, param_type::time, def, desc);
    const raw_value v = fetch(name, param_type::time, def, desc);
    if (!v.present) return;
    quantity q = parse(v, name, {dimension::time, dimension::cycles, dimension::scalar}, "30ns or 2cycles");
    if (q.dim == dimension::scalar) {
        if (q.value != 0) bad(v, name, "a time needs a unit, e.g. " + v.text + "ns or " + v.text + "cycles");
        q.dim = dimension::time;
    }
    if (q.value < 0) bad(v, name, "must not be negative, got '" + v.text + "'");
    f.q = q;
}

void param_decl::operator()(frequency& f, std::string_view name, std::string_view def, std::string_view desc) {
    declare_only(name, param_type::frequency, def, desc);
    const raw_value v = fetch(name, param_type::frequency, def, desc);
    if (!v.present) return;
    const quantity q = parse(v, name, {dimension::frequency}, "1.1GHz");
    check_bound(q.value, bound::positive, v, name);
    if (const std::string why = clock_out_of_range(q.value); !why.empty()) bad(v, name, why);
    f.q = q;
}

void param_decl::operator()(byte_size& f, std::string_view name, std::string_view def, std::string_view desc, bound b) {
    declare_only(name, param_type::size, def, desc);
    const raw_value v = fetch(name, param_type::size, def, desc);
    if (!v.present) return;
    quantity q = parse(v, name, {dimension::size, dimension::scalar}, "48KiB");
    if (q.dim == dimension::scalar && q.value != 0)
        bad(v, name, "a size needs a unit, e.g. " + v.text + "B or " + v.text + "KiB");
    q.dim = dimension::size;
    if (std::floor(q.value) != q.value) bad(v, name, "must be a whole number of bytes, got '" + v.text + "'");
    check_bound(q.value, b, v, name);
    if (q.value > static_cast<double>(k_max_count))
        bad(v, name, "'" + v.text + "' is more than 2^53 bytes (8 PiB), the largest size tessel handles exactly");
    f.q = q;
}

void param_decl::operator()(bandwidth& f, std::string_view name, std::string_view def, std::string_view desc) {
    declare_only(name, param_type::bandwidth, def, desc);
    const raw_value v = fetch(name, param_type::bandwidth, def, desc);
    if (!v.present) return;
    const quantity q = parse(v, name, {dimension::bandwidth, dimension::size_per_cycle}, "3.35TB/s or 32B/cycle");
    check_bound(q.value, bound::positive, v, name);
    f.q = q;
}

void param_decl::operator()(rate_table& f, std::string_view name, std::string_view def, std::string_view desc) {
    read_table(f.by_type, param_type::rate_table, dimension::scalar, "256", name, def, desc);
}

void param_decl::operator()(energy_table& f, std::string_view name, std::string_view def, std::string_view desc) {
    read_table(f.by_type, param_type::energy_table, dimension::energy, "0.4pJ", name, def, desc);
}

quantity param_decl::read_quantity(param_type type, dimension dim, std::string_view example, std::string_view name,
                                   std::string_view def, std::string_view desc, bool& present) {
    declare_only(name, type, def, desc);
    const raw_value v = fetch(name, type, def, desc);
    present = v.present;
    if (!v.present) return {};
    quantity q = parse(v, name, {dim, dimension::scalar}, example);
    if (q.dim == dimension::scalar && q.value != 0)
        bad(v, name, "a " + std::string(param_type_name(type)) + " needs a unit, e.g. " + std::string(example));
    q.dim = dim;
    check_bound(q.value, bound::non_negative, v, name);
    return q;
}

void param_decl::operator()(energy& f, std::string_view name, std::string_view def, std::string_view desc) {
    bool present = false;
    const quantity q = read_quantity(param_type::energy, dimension::energy, "0.5pJ", name, def, desc, present);
    if (present) f.q = q;
}

void param_decl::operator()(power& f, std::string_view name, std::string_view def, std::string_view desc) {
    bool present = false;
    const quantity q = read_quantity(param_type::power, dimension::power, "40W", name, def, desc, present);
    if (present) f.q = q;
}

void param_decl::operator()(energy_per_byte& f, std::string_view name, std::string_view def, std::string_view desc) {
    bool present = false;
    const quantity q = read_quantity(param_type::energy_per_byte, dimension::energy_per_size, "12pJ/B or 3.9pJ/bit",
                                     name, def, desc, present);
    if (present) f.q = q;
}

namespace {

/// A table's compiled-in default, parsed once per text: every unit of a kind declares the same tables (a 32-socket
/// SN40L's 66,560 PCUs and PMUs parsed their energy tables' defaults for a tenth of a whole-model sample's run).
const yaml_node& default_table(std::string_view def) {
    static std::map<std::string, yaml_node, std::less<>> parsed;
    auto it = parsed.find(def);
    if (it == parsed.end()) {
        const std::string text(def);
        it = parsed.emplace(text, yaml_node::load_string(text, "the compiled-in default " + text)).first;
    }
    return it->second;
}

}  // namespace

void param_decl::read_table(std::map<dtype, double>& by_type, param_type type, dimension dim, std::string_view example,
                            std::string_view name, std::string_view def, std::string_view desc) {
    declare_only(name, type, def, desc);
    const std::string full = m_path + "." + std::string(name);
    // A value of the table's dimension; a bare number only for a dimensionless table (or a zero).
    auto value_of = [&](const raw_value& rv, const std::string& what) {
        quantity q = parse(rv, what, {dim, dimension::scalar}, example);
        if (q.dim != dim && q.value != 0)
            bad(rv, what, "needs a unit, e.g. " + std::string(example) + ", got '" + rv.text + "'");
        check_bound(q.value, bound::non_negative, rv, what);
        return q.value;
    };
    const std::string shape =
        "a table such as {fp16: " + std::string(example) + ", fp32: " + std::string(example) + "}";
    auto fill = [&](const yaml_node& table) {
        table.expect_map("parameter '" + std::string(name) + "' of " + m_what + " (" + shape + ")");
        by_type.clear();
        for (const auto& e : table.entries()) {
            const auto t = parse_dtype(e.key);
            if (!t)
                throw input_error("unknown data type '" + e.key + "' in '" + std::string(name) +
                                      "'; expected one of: " + dtype_list(),
                                  e.key_where);
            raw_value rv{e.value.scalar(std::string(name) + "." + e.key), e.value.where(), false, true};
            if (m_ctx) rv.text = m_ctx->substitute(rv.text, rv.where);
            by_type[*t] = value_of(rv, std::string(name) + "." + e.key);
        }
    };
    if (describing()) {
        if (def != required) fill(default_table(def));
        return;
    }
    m_known.emplace_back(name);
    const yaml_node n = m_node[name];
    const std::string* preset_text = nullptr;
    if (m_preset)
        for (const auto& [k, val] : *m_preset)
            if (k == m_preset_prefix + std::string(name)) preset_text = &val;
    if (n.defined())
        fill(n);
    else if (preset_text)
        fill(yaml_node::load_string(*preset_text, "preset value of " + full));
    else if (def != required)
        fill(default_table(def));
    else
        throw input_error(
            "missing required parameter '" + std::string(name) + "' of " + m_what + " (" + std::string(desc) + ")",
            m_node.where());
    // Overrides address single entries: --set tile.pe.macs_per_cycle.fp16=512
    if (m_ctx) {
        for (int i = 0; i < dtype_count; ++i) {
            const dtype t = static_cast<dtype>(i);
            if (const auto* o = m_ctx->find_override(full + "." + dtype_name(t))) {
                raw_value rv{o->text, source_location{"--set " + full + "." + dtype_name(t) + "=" + o->text, 0, 0},
                             true, true};
                by_type[t] = value_of(rv, std::string(name));
            }
        }
        std::string text = "{";
        for (const auto& [t, r] : by_type)
            text += std::string(text.size() > 1 ? ", " : "") + dtype_name(t) + ": " +
                    (dim == dimension::scalar ? format_number(r, 12) : format_number(r * 1e12, 12) + "pJ");
        m_ctx->record(full, text + "}");
    }
}

source_location param_decl::given_at(const yaml_node& node, const std::string& path,
                                     const source_location& otherwise) const {
    if (m_ctx)
        if (const auto* o = m_ctx->find_override(path)) return source_location{"--set " + path + "=" + o->text, 0, 0};
    const yaml_node n = node[path.substr(path.rfind('.') + 1)];
    return n.defined() ? n.where() : otherwise;
}

void param_decl::finish() const {
    if (describing() || !m_node.defined()) return;
    m_node.check_keys(m_known, "parameters of " + m_what);
}

}  // namespace tessel
