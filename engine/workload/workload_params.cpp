#include "engine/workload/workload_params.h"

#include "models/core/checked.h"

#include <cmath>

#include "models/core/expr.h"
#include "models/core/limits.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel {

void workload_params::declare(const std::string& name, const std::string& value, const std::string& doc,
                              const source_location& where) {
    for (auto& p : m_params)
        if (p.name == name) {
            p.value = value;
            if (!doc.empty()) p.doc = doc;
            if (where.known()) p.where = where;
            return;
        }
    m_params.push_back(workload_param{name, value, doc, where, false});
}

void workload_params::set_user(const std::string& name, const std::string& value, const source_location& where) {
    for (auto& p : m_params)
        if (p.name == name) {
            p.value = value;
            p.where = where;
            p.user = true;
            return;
        }
    fail("workload '" + m_workload + "' has no parameter '" + name + "'" + did_you_mean(name, names()) +
             "; its parameters are: " + join(names()),
         where);
}

void workload_params::declare_common() {
    if (!has("precision"))
        declare("precision", "fp16",
                "data type of floating-point tensors and of the arithmetic (" + dtype_list() + ")");
    if (!has("training"))
        declare("training", "none",
                "none for inference; sgd or adam to add the backward pass and the optimizer step (16-bit precisions "
                "keep fp32 master weights and optimizer state)");
    if (!has("fuse")) declare("fuse", "false", "fuse elementwise ops into the op producing their input");
}

bool workload_params::has(const std::string& name) const { return find(name) != nullptr; }

const workload_param* workload_params::find(const std::string& name) const {
    for (const auto& p : m_params)
        if (p.name == name) return &p;
    return nullptr;
}

std::vector<std::string> workload_params::names() const {
    std::vector<std::string> v;
    for (const auto& p : m_params) v.push_back(p.name);
    return v;
}

void workload_params::apply_overrides(const std::map<std::string, std::string>& overrides) {
    for (const auto& [key, value] : overrides) {
        bool found = false;
        for (auto& p : m_params)
            if (p.name == key) {
                p.value = value;
                p.overridden = true;
                p.user = true;
                p.where = source_location{"--set workload." + key, 0, 0};
                found = true;
            }
        if (!found)
            fail("--set workload." + key + "=" + value + ": workload '" + m_workload + "' has no parameter '" + key +
                 "'" + did_you_mean(key, names()) + "; its parameters are: " + join(names()));
    }
}

void workload_params::bad(const workload_param& p, const std::string& what) const {
    fail("workload parameter '" + p.name + "' = '" + p.value + "': " + what, p.where);
}

const std::string& workload_params::text(const std::string& name) const {
    const auto* p = find(name);
    if (!p) fail("workload '" + m_workload + "' has no parameter '" + name + "'");
    return p->value;
}

bool workload_params::names_parameter(const std::string& text) const {
    try {
        for (const auto& v : expression::parse(text).variables())
            if (has(v)) return true;
    } catch (const expr_error&) {
    }
    return false;
}

double workload_params::number_of(const workload_param& p, int depth) const {
    if (depth > 32) bad(p, "its definition refers back to itself");
    try {
        const quantity q = parse_quantity(p.value);
        if (q.dim != dimension::scalar) bad(p, "expected a plain number, got a " + std::string(dimension_name(q.dim)));
        return q.value;
    } catch (const input_error&) {
    }
    try {
        const expression e = expression::parse(p.value);
        return e.eval_number([&](std::string_view v) -> std::optional<expr_value> {
            const auto* other = find(std::string(v));
            if (!other) return std::nullopt;
            return number_of(*other, depth + 1);
        });
    } catch (const expr_error& e) {
        bad(p, std::string("expected a number or an expression over parameters: ") + e.what());
    }
}

double workload_params::number(const std::string& name) const {
    const auto* p = find(name);
    if (!p) fail("workload '" + m_workload + "' has no parameter '" + name + "'");
    return number_of(*p, 0);
}

std::int64_t workload_params::integer(const std::string& name) const {
    const double v = number(name);
    if (std::fabs(v) > static_cast<double>(k_max_count))
        bad(*find(name), "is more than 2^53 (" + std::to_string(k_max_count) + "), the largest count tessel handles");
    if (std::floor(v) != v) bad(*find(name), "expected a whole number");
    return static_cast<std::int64_t>(v);
}

std::int64_t workload_params::positive(const std::string& name, std::int64_t min) const {
    const std::int64_t v = integer(name);
    if (v < min) bad(*find(name), "must be at least " + std::to_string(min));
    return v;
}

std::int64_t workload_params::repeats(const std::string& name, double ops_each, std::int64_t min) const {
    const std::int64_t v = positive(name, min);
    if (static_cast<double>(v) * ops_each > limits().ops)
        bad(*find(name), over_limit("ops", static_cast<double>(v) * ops_each, "ops or more") + "; use fewer");
    return v;
}

bool workload_params::boolean(const std::string& name) const {
    const std::string& v = text(name);
    if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
    if (v == "false" || v == "no" || v == "off" || v == "0") return false;
    bad(*find(name), "expected true or false");
}

dtype workload_params::precision() const {
    const std::string& v = text("precision");
    const auto t = parse_dtype(v);
    if (!t) bad(*find("precision"), "unknown data type (known: " + dtype_list() + ")");
    return *t;
}

std::string workload_params::choice(const std::string& name, const std::vector<std::string>& choices) const {
    const std::string& v = text(name);
    for (const auto& c : choices)
        if (v == c) return v;
    bad(*find(name), "expected one of: " + join(choices) + did_you_mean(v, choices));
}

double workload_params::eval(const std::string& text, const source_location& where, const std::string& what) const {
    try {
        const quantity q = parse_quantity(text);
        if (q.dim == dimension::scalar) return q.value;
    } catch (const input_error&) {
    }
    std::string inner = text;
    if (inner.size() > 3 && inner.compare(0, 2, "${") == 0 && inner.back() == '}')
        inner = inner.substr(2, inner.size() - 3);
    try {
        const expression e = expression::parse(inner);
        return e.eval_number([&](std::string_view v) -> std::optional<expr_value> {
            const auto* p = find(std::string(v));
            if (!p) return std::nullopt;
            return number_of(*p, 1);
        });
    } catch (const expr_error& e) {
        source_location at = where;
        if (at.line > 0 && inner.size() == text.size()) at.column += static_cast<int>(e.offset);
        fail(what + ": '" + text + "': " + e.what() + (m_params.empty() ? "" : " (parameters: " + join(names()) + ")"),
             at);
    }
}

std::map<std::string, std::string> workload_params::resolved() const {
    std::map<std::string, std::string> m;
    for (const auto& p : m_params) m[p.name] = names_parameter(p.value) ? format_number(number_of(p, 0), 12) : p.value;
    return m;
}

}  // namespace tessel
