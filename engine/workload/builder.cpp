#include "engine/workload/builder.h"

#include "engine/workload/cost.h"
#include "engine/workload/op_types.h"

namespace tessel {

graph_builder::graph_builder(std::string name, dtype precision, source_location where)
    : m_precision(precision), m_where(std::move(where)) {
    m_g.name = std::move(name);
}

int graph_builder::new_tensor(const std::string& name, shape_t shape, dtype type, tensor_role role) {
    if (m_g.find_tensor(name) >= 0)
        fail("workload '" + m_g.name + "': tensor '" + name + "' is defined twice", m_where);
    tensor_info t;
    t.name = name;
    t.shape = std::move(shape);
    t.type = type;
    t.role = role;
    return m_g.add_tensor(std::move(t));
}

int graph_builder::input(const std::string& name, shape_t shape, std::optional<dtype> type) {
    return new_tensor(name, std::move(shape), type.value_or(m_precision), tensor_role::input);
}

int graph_builder::weight(const std::string& name, shape_t shape) {
    return new_tensor(name, std::move(shape), m_precision, tensor_role::weight);
}

int graph_builder::state(const std::string& name, shape_t shape, std::optional<dtype> type) {
    return new_tensor(name, std::move(shape), type.value_or(m_precision), tensor_role::state);
}

int graph_builder::constant(const std::string& name, shape_t shape, std::optional<dtype> type) {
    return new_tensor(name, std::move(shape), type.value_or(m_precision), tensor_role::constant);
}

std::vector<int> graph_builder::add(const std::string& type, const std::string& name, std::vector<int> inputs,
                                    const op_attrs& attrs, int outputs) {
    op_node op;
    op.name = name;
    op.type = type;
    const op_type_info* info = find_op_type(type);
    if (!info) fail("unknown op type '" + type + "' for op '" + name + "'", m_where);
    op.kind = info->kind;
    op.inputs = std::move(inputs);
    op.int_attrs = attrs.ints;
    op.float_attrs = attrs.numbers;
    op.str_attrs = attrs.texts;
    op.compute_type = m_precision;
    op.where = m_where;
    apply_attr_defaults(op);
    for (int o = 0; o < outputs; ++o)
        op.outputs.push_back(
            new_tensor(outputs == 1 ? name : name + "." + std::to_string(o), {}, m_precision, tensor_role::activation));
    const int index = m_g.add_op(std::move(op));
    infer_op(m_g, index);
    return m_g.op(index).outputs;
}

int graph_builder::add1(const std::string& type, const std::string& name, std::vector<int> inputs,
                        const op_attrs& attrs) {
    return add(type, name, std::move(inputs), attrs, 1).front();
}

workload_graph graph_builder::finish() {
    finalize_graph(m_g, m_precision);
    return std::move(m_g);
}

void finalize_graph(workload_graph& g, dtype precision) {
    g.relink();
    bool has_outputs = false;
    for (const auto& t : g.tensors()) has_outputs |= t.role == tensor_role::output;
    if (!has_outputs)
        for (auto& t : g.tensors())
            if (t.producer >= 0 && t.consumers.empty() && t.role == tensor_role::activation)
                t.role = tensor_role::output;
    // A degenerate workload would "simulate" in 0 s: refuse it instead of reporting nonsense.
    if (g.ops().empty()) fail("workload '" + g.name + "' has no ops: there is nothing to simulate");
    for (const auto& t : g.tensors())
        if (t.role == tensor_role::input && t.elements() == 0)
            fail("workload '" + g.name + "': input '" + t.name + "' has shape " + t.shape_str() +
                     ", with no elements (is a size parameter such as batch 0?)",
                 t.consumers.empty() ? source_location{} : g.ops()[static_cast<size_t>(t.consumers.front())].where);
    g.topological_order();  // throws naming a cycle
    compute_costs(g);
    g.parameters["precision"] = dtype_name(precision);
}

}  // namespace tessel
