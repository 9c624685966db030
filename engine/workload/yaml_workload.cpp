#include "engine/workload/yaml_workload.h"

#include "models/core/checked.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <optional>
#include <ostream>

#include "engine/workload/builder.h"
#include "engine/workload/generator_source.h"
#include "engine/workload/generators.h"
#include "engine/workload/load.h"
#include "engine/workload/op_types.h"
#include "engine/workload/shape_inference.h"
#include "engine/workload/workload_params.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel {

namespace {

const std::vector<std::string> top_keys = {"workload", "description", "parameters", "generator",
                                           "tensors",  "ops",         "outputs"};
const std::vector<std::string> tensor_keys = {"shape", "dtype", "role", "alias_of"};
const std::vector<std::string> op_base_keys = {"name", "op", "inputs", "outputs", "phase", "compute", "fused"};

std::optional<tensor_role> parse_role(const std::string& s) {
    for (auto r : {tensor_role::activation, tensor_role::input, tensor_role::output, tensor_role::weight,
                   tensor_role::state, tensor_role::constant})
        if (s == tensor_role_name(r)) return r;
    return std::nullopt;
}

std::string file_stem(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    std::string f = slash == std::string::npos ? path : path.substr(slash + 1);
    const size_t dot = f.rfind('.');
    return dot == std::string::npos ? f : f.substr(0, dot);
}

class explicit_loader {
public:
    explicit_loader(const yaml_node& root, const workload_params& params, std::string name)
        : m_root(root), m_params(params), m_precision(params.precision()) {
        m_g.name = std::move(name);
    }

    workload_graph load() {
        read_tensors();
        read_ops();
        // A cycle makes shape inference impossible: find it first and name it.
        const auto order = m_g.topological_order();
        check_sources();
        for (int v : order) infer_op(m_g, v, m_declared);
        read_outputs();
        for (auto& op : m_g.ops())
            if (!m_compute_set.count(op.name)) op.compute_type = m_precision;
        finalize_graph(m_g, m_precision);
        return std::move(m_g);
    }

private:
    const yaml_node& m_root;
    const workload_params& m_params;
    dtype m_precision;
    workload_graph m_g;
    std::vector<char> m_declared;
    std::vector<source_location> m_tensor_where;
    std::map<std::string, int> m_compute_set;

    std::int64_t whole(const yaml_node& n, const std::string& what, std::int64_t min) const {
        const std::string text = n.scalar(what);
        // A count has no unit: "64KiB" as a dimension is a size written where a number of elements belongs.
        std::optional<quantity> q;
        try {
            q = parse_quantity(text);
        } catch (const input_error&) {
        }
        if (q && q->dim != dimension::scalar)
            n.fail(what + ": '" + text +
                   "' has a unit; expected a plain whole number (a count of elements, not a size)");
        const double v = m_params.eval(text, n.where(), what);
        const std::string shown = text == format_number(v, 12) ? text : "'" + text + "' = " + format_number(v, 12);
        if (std::isnan(v)) n.fail(what + ": expected a whole number, got " + shown);
        if (v < static_cast<double>(min)) n.fail(what + ": must be at least " + std::to_string(min) + ", got " + shown);
        if (v > static_cast<double>(k_max_count))
            n.fail(what + ": " + shown + " is more than 2^53 (" + std::to_string(k_max_count) +
                   "), the largest size tessel handles");
        if (std::floor(v) != v) n.fail(what + ": expected a whole number, got " + shown);
        return static_cast<std::int64_t>(v);
    }

    int tensor_index(const yaml_node& n, const std::string& what) const {
        const std::string name = n.scalar(what);
        const int t = m_g.find_tensor(name);
        if (t < 0) {
            std::vector<std::string> names;
            for (const auto& ti : m_g.tensors()) names.push_back(ti.name);
            n.fail(what + ": unknown tensor '" + name + "'" + did_you_mean(name, names) +
                   " (tensors are declared under tensors: or produced by an op)");
        }
        return t;
    }

    int new_tensor(const std::string& name, const source_location& where) {
        tensor_info t;
        t.name = name;
        t.type = m_precision;
        m_declared.push_back(0);
        m_tensor_where.push_back(where);
        return m_g.add_tensor(std::move(t));
    }

    void read_tensors() {
        const yaml_node ts = m_root["tensors"];
        if (!ts.defined()) return;
        ts.expect_map("tensors");
        std::vector<std::pair<int, yaml_node>> aliases;
        for (const auto& e : ts.entries()) {
            const std::string what = "tensor '" + e.key + "'";
            if (m_g.find_tensor(e.key) >= 0) throw input_error(what + " is declared twice", e.key_where);
            e.value.expect_map(what);
            e.value.check_keys(tensor_keys, what);
            const int t = new_tensor(e.key, e.key_where);
            auto& ti = m_g.tensors()[static_cast<size_t>(t)];
            if (e.value.has("dtype")) {
                const yaml_node d = e.value["dtype"];
                const auto type = parse_dtype(d.scalar(what + " dtype"));
                if (!type) d.fail(what + ": unknown dtype '" + d.scalar("dtype") + "' (known: " + dtype_list() + ")");
                ti.type = *type;
            }
            if (e.value.has("role")) {
                const yaml_node r = e.value["role"];
                const auto role = parse_role(r.scalar(what + " role"));
                if (!role)
                    r.fail(what + ": unknown role '" + r.scalar("role") +
                           "'; expected one of: input, weight, state, constant, activation, output");
                ti.role = *role;
            }
            if (e.value.has("shape")) {
                const yaml_node s = e.value["shape"];
                s.expect_seq(what + " shape");
                for (const auto& d : s.items()) ti.shape.push_back(whole(d, what + " shape", 0));
                m_declared[static_cast<size_t>(t)] = 1;
            } else if (ti.role != tensor_role::activation && ti.role != tensor_role::output) {
                e.value.fail(what + " is a " + tensor_role_name(ti.role) + " and needs a shape");
            }
            if (e.value.has("alias_of")) aliases.emplace_back(t, e.value["alias_of"]);
        }
        for (const auto& [t, n] : aliases) m_g.tensors()[static_cast<size_t>(t)].alias_of = tensor_index(n, "alias_of");
    }

    void read_attr(op_node& op, const attr_spec& a, const yaml_node& v, const std::string& what) {
        const std::string w = what + " " + a.name;
        switch (a.type) {
            case attr_type::integer:
                op.int_attrs[a.name] = {whole(v, w, INT64_MIN / 2)};
                break;
            case attr_type::boolean:
                op.int_attrs[a.name] = {v.as_bool(w) ? 1 : 0};
                break;
            case attr_type::integers: {
                std::vector<std::int64_t> list;
                if (v.is_seq())
                    for (const auto& i : v.items()) list.push_back(whole(i, w, INT64_MIN / 2));
                else
                    list.push_back(whole(v, w, INT64_MIN / 2));
                op.int_attrs[a.name] = list;
                break;
            }
            case attr_type::number:
                op.float_attrs[a.name] = m_params.eval(v.scalar(w), v.where(), w);
                break;
            case attr_type::text:
                op.str_attrs[a.name] = v.scalar(w);
                break;
        }
    }

    struct pending_inputs {
        int op;
        std::vector<yaml_node> names;
    };

    void read_ops() {
        const yaml_node ops = m_root["ops"];
        if (!ops.defined()) m_root.fail("workload '" + m_g.name + "' has no ops: (or give a generator:)");
        ops.expect_seq("ops");
        std::vector<pending_inputs> pending;
        std::map<std::string, source_location> op_names;
        for (const auto& item : ops.items()) {
            item.expect_map("op");
            if (!item.has("op")) item.fail("an op needs 'op:' (its type, e.g. matmul, relu, conv2d)");
            if (!item.has("name"))
                item.fail("an op needs 'name:' (its result is the tensor of that name unless outputs: says otherwise)");
            op_node op;
            op.name = item["name"].scalar("op name");
            op.where = item.where();
            const yaml_node type_node = item["op"];
            const std::string type = type_node.scalar("op type");
            const op_type_info* info = find_op_type(type);
            if (!info)
                type_node.fail("unknown op type '" + type + "'" + did_you_mean(type, op_type_names()) +
                               "; see docs/workload-yaml.md for the list");
            const std::string what = "op '" + op.name + "' (" + type + ")";
            if (op_names.count(op.name))
                item["name"].fail(what + ": another op has this name (at " + op_names[op.name].str() + ")");
            op_names[op.name] = op.where;
            std::vector<std::string> allowed = op_base_keys;
            for (const auto& a : info->attrs) allowed.push_back(a.name);
            if (is_grad_type(type)) allowed.push_back("like");
            item.check_keys(allowed, what);
            op.kind = info->kind;
            op.type = type;
            if (info->kind == op_kind::generic || info->kind == op_kind::shape_only) {
                if (!item.has("type")) item.fail(what + ": needs 'type:' naming the op (e.g. the ONNX op type)");
                op.type = item["type"].scalar("type");
            }
            for (const auto& a : info->attrs)
                if (a.name != "type" && item.has(a.name)) read_attr(op, a, item[a.name], what);
            if (item.has("like"))
                read_attr(op, attr_spec{"like", attr_type::integers, "", true, "", {}}, item["like"], what);
            if (item.has("phase")) {
                const std::string ph = item["phase"].scalar("phase");
                if (ph == "forward")
                    op.phase = op_phase::forward;
                else if (ph == "backward")
                    op.phase = op_phase::backward;
                else if (ph == "optimizer")
                    op.phase = op_phase::optimizer;
                else
                    item["phase"].fail(what + ": phase must be forward, backward or optimizer");
            }
            if (item.has("compute")) {
                const auto t = parse_dtype(item["compute"].scalar("compute"));
                if (!t) item["compute"].fail(what + ": unknown compute type (known: " + dtype_list() + ")");
                op.compute_type = *t;
                m_compute_set[op.name] = 1;
            }
            apply_attr_defaults(op);
            // Outputs: named tensors (default: the op's own name).
            std::vector<std::pair<std::string, source_location>> outs;
            if (item.has("outputs")) {
                const yaml_node o = item["outputs"];
                o.expect_seq(what + " outputs");
                for (const auto& n : o.items()) outs.emplace_back(n.scalar("output name"), n.where());
            } else {
                outs.emplace_back(op.name, op.where);
            }
            for (const auto& [name, where] : outs) {
                int t = m_g.find_tensor(name);
                if (t < 0) t = new_tensor(name, where);
                const auto& ti = m_g.tensor(t);
                // Inputs and state come from outside the graph; constants and weights (in another layout)
                // may come from a shape_only op, which computes them once.
                const bool from_outside = ti.role == tensor_role::input || ti.role == tensor_role::state;
                const bool computed_once = ti.role == tensor_role::constant || ti.role == tensor_role::weight;
                if (from_outside || (computed_once && op.kind != op_kind::shape_only))
                    throw input_error(
                        what + ": its output '" + name + "' is declared as a " + tensor_role_name(ti.role) +
                            (from_outside ? ", which no op may produce"
                                          : ", which only a shape_only op (computed once, at no cost) may produce"),
                        where);
                if (ti.producer >= 0)
                    throw input_error(
                        what + ": tensor '" + name + "' is already produced by op '" + m_g.op(ti.producer).name + "'",
                        where);
                m_g.tensors()[static_cast<size_t>(t)].producer = static_cast<int>(m_g.ops().size());
                op.outputs.push_back(t);
            }
            pending_inputs pi{static_cast<int>(m_g.ops().size()), {}};
            if (item.has("inputs")) {
                item["inputs"].expect_seq(what + " inputs");
                pi.names = item["inputs"].items();
            }
            if (item.has("fused")) {
                const yaml_node f = item["fused"];
                f.expect_seq(what + " fused");
                for (const auto& e : f.items()) {
                    fused_op fo;
                    if (e.is_scalar()) {
                        fo.type = e.scalar("fused op");
                        fo.name = op.name + "." + fo.type;
                    } else {
                        e.expect_map("fused op");
                        e.check_keys({"name", "op", "inputs"}, what + " fused op");
                        fo.type = e["op"].scalar("fused op type");
                        fo.name = e.has("name") ? e["name"].scalar("name") : op.name + "." + fo.type;
                        if (e.has("inputs")) {
                            e["inputs"].expect_seq("fused inputs");
                            for (const auto& n : e["inputs"].items()) {
                                pi.names.push_back(n);
                                ++fo.extra_inputs;
                            }
                        }
                    }
                    const op_type_info* fi = find_op_type(fo.type);
                    if (!fi || fi->kind != op_kind::elementwise)
                        e.fail(what + ": fused op '" + fo.type + "' is not an elementwise op type");
                    op.fused.push_back(fo);
                }
            }
            pending.push_back(std::move(pi));
            m_g.ops().push_back(std::move(op));
        }
        // Inputs may name tensors produced by later ops: resolve them once every op is known.
        std::vector<op_node> ops_read = std::move(m_g.ops());
        m_g.ops().clear();
        for (auto& t : m_g.tensors()) t.producer = -1;
        for (size_t i = 0; i < ops_read.size(); ++i) {
            op_node op = std::move(ops_read[i]);
            for (const auto& n : pending[i].names) op.inputs.push_back(tensor_index(n, describe_op(op) + " input"));
            m_g.add_op(std::move(op));
        }
    }

    void check_sources() {
        for (size_t t = 0; t < m_g.tensors().size(); ++t) {
            const auto& ti = m_g.tensors()[t];
            if (ti.producer >= 0) continue;
            if (ti.role == tensor_role::activation || ti.role == tensor_role::output) {
                if (ti.consumers.empty() && ti.role == tensor_role::activation)
                    throw input_error("tensor '" + ti.name +
                                          "' is neither produced nor read by any op; give it a role (input, weight, "
                                          "state, constant) or remove it",
                                      m_tensor_where[t]);
                throw input_error("tensor '" + ti.name + "' is read by op '" +
                                      (ti.consumers.empty() ? std::string("?") : m_g.op(ti.consumers.front()).name) +
                                      "' but no op produces it: declare it with role input, weight, state or constant",
                                  m_tensor_where[t]);
            }
            if (ti.consumers.empty())
                m_g.notes.push_back("tensor '" + ti.name + "' (" + tensor_role_name(ti.role) +
                                    ") is declared but no op reads it");
        }
    }

    void read_outputs() {
        const yaml_node outs = m_root["outputs"];
        if (!outs.defined()) return;
        outs.expect_seq("outputs");
        for (const auto& n : outs.items()) {
            const int t = tensor_index(n, "outputs");
            auto& ti = m_g.tensors()[static_cast<size_t>(t)];
            if (ti.producer < 0) n.fail("outputs: tensor '" + ti.name + "' is not produced by an op");
            ti.role = tensor_role::output;
        }
    }
};

/// An explicit graph read once; each build walks the parsed tree with the overridden parameters (a shape may be
/// an expression over them), so nothing is read or parsed again.
class yaml_graph_source final : public workload_source {
public:
    yaml_graph_source(std::string spec, yaml_node root, workload_params params, std::string name)
        : workload_source(std::move(spec)),
          m_root(std::move(root)),
          m_params(std::move(params)),
          m_name(std::move(name)) {}

private:
    yaml_node m_root;
    workload_params m_params;  // the file's parameters and the common ones, before overrides
    std::string m_name;

    workload_graph build_graph(const workload_overrides& overrides) const override {
        workload_params params = m_params;
        params.apply_overrides(overrides.to_map());
        workload_graph g = explicit_loader(m_root, params, m_name).load();
        apply_workload_options(g, params);
        return g;
    }
};

std::shared_ptr<const workload_source> source_of(const yaml_node& root, const std::string& file, std::string spec) {
    root.expect_map("workload file");
    root.check_keys(top_keys, "workload file");
    const std::string name = root.has("workload") ? root["workload"].scalar("workload") : file_stem(file);
    workload_params params(name);
    const yaml_node pnode = root["parameters"];
    if (pnode.defined()) pnode.expect_map("parameters");
    if (root.has("generator")) {
        for (const char* k : {"tensors", "ops", "outputs"})
            if (root.has(k))
                root[k].fail(std::string("a generator workload has no ") + k + ": (the generator builds the graph)");
        const yaml_node gn = root["generator"];
        const std::string gen_name = gn.scalar("generator");
        const generator_info* gen = find_generator(gen_name);
        if (!gen) {
            std::vector<std::string> names;
            for (const auto& x : generators()) names.push_back(x.name);
            gn.fail("unknown generator '" + gen_name + "'" + did_you_mean(gen_name, names) + "; known: " + join(names));
        }
        declare_generator_params(*gen, params);
        for (const auto& e : pnode.entries())
            params.set_user(e.key, e.value.scalar("parameter '" + e.key + "'"), e.key_where);
        return make_generator_source(std::move(spec), *gen, std::move(params), name);
    }
    // An explicit graph's parameters are whatever its file declares (plus the common ones).
    for (const auto& e : pnode.entries()) {
        const std::string value = e.value.scalar("parameter '" + e.key + "'");
        params.declare(e.key, value, {}, e.value.where());
        params.set_user(e.key, value, e.value.where());
    }
    params.declare_common();
    return std::make_shared<yaml_graph_source>(std::move(spec), root, std::move(params), name);
}

}  // namespace

std::shared_ptr<const workload_source> make_yaml_source(const std::string& path, const std::string& spec) {
    return source_of(yaml_node::load_file(path), path, spec.empty() ? path : spec);
}

std::shared_ptr<const workload_source> make_yaml_source_text(const std::string& text, const std::string& name) {
    return source_of(yaml_node::load_string(text, name), name, name);
}

workload_graph load_workload_yaml(const std::string& path, const std::map<std::string, std::string>& overrides) {
    return make_yaml_source(path)->build(parse_workload_overrides(overrides));
}

workload_graph load_workload_yaml_text(const std::string& text, const std::string& name,
                                       const std::map<std::string, std::string>& overrides) {
    return make_yaml_source_text(text, name)->build(parse_workload_overrides(overrides));
}

// ---------------------------------------------------------------------------------------------- writer

namespace {

void emit_attrs(YAML::Emitter& out, const op_node& op, const op_type_info& info) {
    for (const auto& a : info.attrs) {
        if (a.name == "type") continue;
        switch (a.type) {
            case attr_type::integer:
                if (op.int_attrs.count(a.name)) out << YAML::Key << a.name << YAML::Value << attr_int(op, a.name);
                break;
            case attr_type::boolean:
                if (op.int_attrs.count(a.name))
                    out << YAML::Key << a.name << YAML::Value << (attr_int(op, a.name) != 0);
                break;
            case attr_type::integers:
                if (op.int_attrs.count(a.name))
                    out << YAML::Key << a.name << YAML::Value << YAML::Flow << attr_ints(op, a.name);
                break;
            case attr_type::number:
                if (op.float_attrs.count(a.name))
                    out << YAML::Key << a.name << YAML::Value << format_number(attr_number(op, a.name), 12);
                break;
            case attr_type::text:
                if (op.str_attrs.count(a.name)) out << YAML::Key << a.name << YAML::Value << attr_text(op, a.name);
                break;
        }
    }
    if (is_grad_type(op.type) && op.int_attrs.count("like"))
        out << YAML::Key << "like" << YAML::Value << YAML::Flow << attr_ints(op, "like");
}

}  // namespace

void write_workload_yaml(const workload_graph& g, std::ostream& os, const std::string& comment) {
    const auto pit = g.parameters.find("precision");
    const dtype precision = pit == g.parameters.end() ? dtype::fp16 : parse_dtype(pit->second).value_or(dtype::fp16);
    YAML::Emitter out;
    out.SetIndent(2);
    out << YAML::BeginMap;
    out << YAML::Key << "workload" << YAML::Value << g.name;
    out << YAML::Key << "parameters" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "precision" << YAML::Value << dtype_name(precision);
    out << YAML::EndMap;
    out << YAML::Key << "tensors" << YAML::Value << YAML::BeginMap;
    for (const auto& t : g.tensors()) {
        out << YAML::Key << t.name << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "shape" << YAML::Value << YAML::Flow << t.shape;
        if (t.type != precision) out << YAML::Key << "dtype" << YAML::Value << dtype_name(t.type);
        if (t.role != tensor_role::activation) out << YAML::Key << "role" << YAML::Value << tensor_role_name(t.role);
        if (t.alias_of >= 0) out << YAML::Key << "alias_of" << YAML::Value << g.tensor(t.alias_of).name;
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
    out << YAML::Key << "ops" << YAML::Value << YAML::BeginSeq;
    for (const auto& op : g.ops()) {
        const bool named_kind = op.kind == op_kind::generic || op.kind == op_kind::shape_only;
        const op_type_info* info = named_kind ? find_op_type(op_kind_name(op.kind)) : find_op_type(op.type);
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << op.name;
        out << YAML::Key << "op" << YAML::Value << (named_kind ? std::string(op_kind_name(op.kind)) : op.type);
        if (named_kind) out << YAML::Key << "type" << YAML::Value << op.type;
        out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (size_t i = 0; i < op.own_inputs(); ++i) out << g.tensor(op.inputs[i]).name;
        out << YAML::EndSeq;
        if (!(op.outputs.size() == 1 && g.tensor(op.outputs[0]).name == op.name)) {
            out << YAML::Key << "outputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (int t : op.outputs) out << g.tensor(t).name;
            out << YAML::EndSeq;
        }
        if (op.phase != op_phase::forward)
            out << YAML::Key << "phase" << YAML::Value << (op.phase == op_phase::backward ? "backward" : "optimizer");
        if (op.compute_type != precision) out << YAML::Key << "compute" << YAML::Value << dtype_name(op.compute_type);
        if (info) emit_attrs(out, op, *info);
        if (!op.fused.empty()) {
            out << YAML::Key << "fused" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            size_t next = op.own_inputs();
            for (const auto& f : op.fused) {
                out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << f.name << YAML::Key << "op"
                    << YAML::Value << f.type;
                if (f.extra_inputs > 0) {
                    out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
                    for (int k = 0; k < f.extra_inputs; ++k) out << g.tensor(op.inputs[next++]).name;
                    out << YAML::EndSeq;
                }
                out << YAML::EndMap;
            }
            out << YAML::EndSeq;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
    os << yaml_comment(comment) << out.c_str() << "\n";
}

std::string yaml_comment(const std::string& text) {
    std::string lines;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t nl = text.find('\n', pos);
        lines += "# " + text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
        if (nl == std::string::npos) break;
        pos = nl + 1;
    }
    return lines;
}

}  // namespace tessel
