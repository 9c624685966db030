// Parameters, declared once. A kind lists its parameters in one function, `declare(param_decl&)`, with name,
// type (from the field's C++ type), default (or `required`) and meaning. The same function serves three readers:
// `tessel describe KIND` (which records the declarations), the YAML loader (which fills the fields from a
// component's `params:` map, `--set` overrides and defaults, strictly), and the resolved-configuration writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "models/core/dtype.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel {

/// Default value meaning "the user must give this".
inline constexpr std::string_view required = "\x01required";

enum class param_type {
    integer,
    real,
    boolean,
    text,
    choice,
    time,
    frequency,
    size,
    bandwidth,
    rate_table,
    energy,
    power,
    energy_per_byte,
    energy_table,
    group
};

const char* param_type_name(param_type t);

struct param_spec {
    std::string name;  // dotted path within the kind ("pe.clock")
    param_type type;
    std::string default_text;  // empty when required
    bool is_required = false;
    std::string desc;
    std::vector<std::string> choices;
};

/// A table of rates by data type, e.g. MACs per cycle {fp16: 1024, fp32: 256}.
struct rate_table {
    std::map<dtype, double> by_type;
    bool has(dtype t) const { return by_type.count(t) != 0; }
    double at(dtype t) const;  // 0 when absent
};

/// Energy per action by data type, e.g. joules per MAC {fp16: 0.4pJ, fp32: 1.2pJ}.
struct energy_table {
    std::map<dtype, double> by_type;  // joules
    bool has(dtype t) const { return by_type.count(t) != 0; }
    double at(dtype t) const;  // 0 when absent
};

/// Lower bound checks for numeric parameters.
enum class bound { none, non_negative, positive };

/// What surrounds one platform load: --set overrides, platform variables for ${...}, and the resolved values.
class param_context {
public:
    struct override_value {
        std::string text;
        bool used = false;
    };
    void add_override(const std::string& path, const std::string& value);
    const override_value* find_override(const std::string& path) const;
    /// Overrides nobody consumed: each is a typo or a parameter that does not exist.
    std::vector<std::string> unused_overrides() const;

    void set_variable(const std::string& name, const std::string& value) { m_variables[name] = value; }
    const std::map<std::string, std::string>& variables() const { return m_variables; }
    /// Puts back a saved set of variables (a chip of a system defines its own while it is built).
    void replace_variables(std::map<std::string, std::string> v) { m_variables = std::move(v); }
    /// Replaces each ${expr} in text by its value (a lone ${name} by the variable's text).
    std::string substitute(const std::string& text, const source_location& where) const;

    void record(const std::string& path, const std::string& value);
    const std::vector<std::pair<std::string, std::string>>& resolved() const { return m_resolved; }

    /// What one read of a kind's parameters depends on: the kind's parameter struct, the path (its overrides and
    /// resolved values), its YAML map, its preset, whether an owner built it, and the variables then in force.
    struct params_read {
        std::type_index type;
        std::string path;
        yaml_node node;
        const void* preset = nullptr;
        bool part = false;
    };
    /// The parameters an earlier identical read produced (component::load_params), or nullptr. The units of a
    /// replicated group, and the chips of a system, read the same map at the same path: each after the first
    /// copies the first's, whose read already consumed the overrides and recorded the resolved values (a
    /// 32-socket SN40L's 66,560 PCUs and PMUs spent a third of a short run reading theirs one by one).
    const void* find_read(const params_read& r) const;
    void keep_read(const params_read& r, std::shared_ptr<const void> value);

private:
    struct kept_read {
        params_read read;
        std::map<std::string, std::string> variables;
        std::shared_ptr<const void> value;
    };
    std::map<std::string, std::vector<kept_read>> m_reads;  // by path
    mutable std::map<std::string, override_value> m_overrides;
    std::map<std::string, std::string> m_variables;
    std::vector<std::pair<std::string, std::string>> m_resolved;
    std::map<std::string, size_t> m_resolved_index;
};

/// A part of a composite built through the kind registry (component::make_part). Its YAML map is
/// `{kind:, preset:, ...the kind's parameters}`: `kind` picks any registered kind (a default otherwise), and
/// `--set OWNER.PART.kind=K` swaps it like any other parameter.
struct part_spec {
    std::string kind, preset;
    yaml_node params;                          // the part's map (undefined when the YAML leaves it out)
    std::string config_path;                   // "gpu.hbm"
    source_location where;                     // the part's map, or its owner's when absent
    source_location kind_where, preset_where;  // where the kind and preset were given (YAML, --set or default)
};

class param_decl {
public:
    /// Describe mode: only records what is declared.
    explicit param_decl(std::vector<param_spec>* out, std::string prefix = {});
    /// Load mode: fills fields from `node` (a map, may be undefined), overrides and defaults.
    /// `path` names the component ("chip.noc") for overrides, messages and the resolved configuration.
    param_decl(const yaml_node& node, param_context* ctx, std::string path, std::string what);

    bool describing() const { return m_specs != nullptr; }

    /// A whole number, at most `most` (2^53 by default: every larger count is a typo or an overflow waiting to
    /// happen, and doubles stop counting exactly there).
    void operator()(std::int64_t& f, std::string_view name, std::string_view def, std::string_view desc,
                    bound b = bound::non_negative, std::int64_t most = std::int64_t{1} << 53);
    void operator()(double& f, std::string_view name, std::string_view def, std::string_view desc,
                    bound b = bound::non_negative);
    void operator()(bool& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(std::string& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(duration& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(frequency& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(byte_size& f, std::string_view name, std::string_view def, std::string_view desc,
                    bound b = bound::non_negative);
    void operator()(bandwidth& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(rate_table& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(energy& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(power& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(energy_per_byte& f, std::string_view name, std::string_view def, std::string_view desc);
    void operator()(energy_table& f, std::string_view name, std::string_view def, std::string_view desc);
    void choice(std::string& f, std::string_view name, std::string_view def, const std::vector<std::string>& choices,
                std::string_view desc);

    /// A nested parameter map (a sub-component's parameters): `sub.declare(child)` fills it.
    template <class P>
    void group(P& sub, std::string_view name, std::string_view desc) {
        if (describing()) {
            m_specs->push_back(
                param_spec{m_prefix + std::string(name), param_type::group, {}, false, std::string(desc), {}});
            param_decl child(m_specs, m_prefix + std::string(name) + ".");
            sub.declare(child);
            return;
        }
        m_known.emplace_back(name);
        param_decl child(m_node[name], m_ctx, m_path + "." + std::string(name), m_what + "." + std::string(name));
        child.set_preset(m_preset, m_preset_prefix + std::string(name) + ".");
        sub.declare(child);
        child.finish();
    }

    /// A nested part (see part_spec): reads its `kind` and `preset` here and leaves the rest of its map to the
    /// part itself. `tessel describe` lists the default kind's parameters (P) under the part's name.
    template <class P>
    void part(part_spec& s, std::string_view name, std::string_view default_kind, std::string_view desc) {
        const std::string kind_desc = "the kind of this part (any registered kind that fits; see `tessel describe`)";
        const std::string preset_desc = "a preset of the part's kind; empty: none";
        if (describing()) {
            m_specs->push_back(param_spec{
                m_prefix + std::string(name),
                param_type::group,
                {},
                false,
                std::string(desc) + " (a part: {kind: " + std::string(default_kind) + ", preset:, ...its parameters})",
                {}});
            param_decl child(m_specs, m_prefix + std::string(name) + ".");
            child(s.kind, "kind", default_kind, kind_desc);
            child(s.preset, "preset", "", preset_desc);
            P p;
            p.declare(child);
            return;
        }
        m_known.emplace_back(name);
        const yaml_node node = m_node[name];
        param_decl child(node, m_ctx, m_path + "." + std::string(name), m_what + "." + std::string(name));
        child(s.kind, "kind", default_kind, kind_desc);
        child(s.preset, "preset", "", preset_desc);
        s.params = node;
        s.config_path = m_path + "." + std::string(name);
        s.where = node.defined() ? node.where() : m_node.where();
        s.kind_where = given_at(node, s.config_path + ".kind", s.where);
        s.preset_where = given_at(node, s.config_path + ".preset", s.where);
    }

    /// Strict check: every key in the YAML map was declared.
    void finish() const;
    /// Accepts a key that someone else reads (a mapper's `impl`).
    void allow(std::string_view key) { m_known.emplace_back(key); }

    /// Named preset values (a kind's preset, e.g. hbm3_stack) that stand between the YAML and the defaults.
    using preset_values = std::vector<std::pair<std::string, std::string>>;
    void set_preset(const preset_values* p, std::string prefix = {}) {
        m_preset = p;
        m_preset_prefix = std::move(prefix);
    }

    const std::string& path() const { return m_path; }

private:
    struct raw_value {
        std::string text;
        source_location where;
        bool from_override = false;
        bool present = false;
    };
    raw_value fetch(std::string_view name, param_type type, std::string_view def, std::string_view desc);
    bool declare_only(std::string_view name, param_type type, std::string_view def, std::string_view desc,
                      std::vector<std::string> choices = {});
    quantity parse(const raw_value& v, std::string_view name, std::initializer_list<dimension> dims,
                   std::string_view example) const;
    [[noreturn]] void bad(const raw_value& v, std::string_view name, const std::string& msg) const;
    /// Where the value at `path` (the last name under `node`) came from: a --set, the YAML, else `otherwise`.
    source_location given_at(const yaml_node& node, const std::string& path, const source_location& otherwise) const;
    void check_bound(double v, bound b, const raw_value& raw, std::string_view name) const;
    /// A non-negative quantity of one dimension (energies and powers).
    quantity read_quantity(param_type type, dimension dim, std::string_view example, std::string_view name,
                           std::string_view def, std::string_view desc, bool& present);
    /// A table by data type whose values have dimension `dim` (rate and energy tables).
    void read_table(std::map<dtype, double>& by_type, param_type type, dimension dim, std::string_view example,
                    std::string_view name, std::string_view def, std::string_view desc);

    std::vector<param_spec>* m_specs = nullptr;
    std::string m_prefix;
    yaml_node m_node;
    param_context* m_ctx = nullptr;
    std::string m_path;
    std::string m_what;
    std::vector<std::string> m_known;
    const preset_values* m_preset = nullptr;
    std::string m_preset_prefix;
};

/// Describes a params struct (one with `void declare(param_decl&)`).
template <class P>
std::vector<param_spec> describe_params() {
    std::vector<param_spec> specs;
    P p;
    param_decl d(&specs);
    p.declare(d);
    return specs;
}

}  // namespace tessel
