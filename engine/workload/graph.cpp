#include "engine/workload/graph.h"

#include <cstdlib>

#include "models/core/checked.h"
#include "models/core/limits.h"

#include <algorithm>
#include <queue>

namespace tessel {

const char* tensor_role_name(tensor_role r) {
    switch (r) {
        case tensor_role::activation:
            return "activation";
        case tensor_role::input:
            return "input";
        case tensor_role::output:
            return "output";
        case tensor_role::weight:
            return "weight";
        case tensor_role::state:
            return "state";
        case tensor_role::constant:
            return "constant";
    }
    return "?";
}

const char* op_kind_name(op_kind k) {
    switch (k) {
        case op_kind::matmul:
            return "matmul";
        case op_kind::conv2d:
            return "conv2d";
        case op_kind::pool:
            return "pool";
        case op_kind::elementwise:
            return "elementwise";
        case op_kind::reduce:
            return "reduce";
        case op_kind::softmax:
            return "softmax";
        case op_kind::layernorm:
            return "layernorm";
        case op_kind::batchnorm:
            return "batchnorm";
        case op_kind::attention:
            return "attention";
        case op_kind::embedding:
            return "embedding";
        case op_kind::gather:
            return "gather";
        case op_kind::reshape:
            return "reshape";
        case op_kind::transpose:
            return "transpose";
        case op_kind::concat:
            return "concat";
        case op_kind::split:
            return "split";
        case op_kind::slice:
            return "slice";
        case op_kind::collective:
            return "collective";
        case op_kind::optimizer:
            return "optimizer";
        case op_kind::generic:
            return "generic";
        case op_kind::shape_only:
            return "shape_only";
    }
    return "?";
}

std::int64_t tensor_info::elements() const { return checked_elements(shape, "tensor '" + name + "'"); }

std::string tensor_info::shape_str() const {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
    return s.empty() ? "scalar" : s;
}

double op_cost::intensity() const {
    const double b = bytes_read() + bytes_written();
    return b > 0 ? flops / b : 0;
}

work op_node::to_work() const {
    work w;
    w.macs = cost.macs;
    w.vector_ops = std::max(0.0, cost.flops - 2 * cost.macs);
    w.bytes_in = cost.bytes_in;
    w.bytes_weight = cost.bytes_weight;
    w.bytes_out = cost.bytes_out;
    w.type = compute_type;
    w.cls = cost.cls;
    w.batch = cost.batch;
    w.m = cost.m;
    w.n = cost.n;
    w.k = cost.k;
    return w;
}

size_t op_node::own_inputs() const {
    size_t extra = 0;
    for (const auto& f : fused) extra += static_cast<size_t>(f.extra_inputs);
    return inputs.size() >= extra ? inputs.size() - extra : 0;
}

void workload_graph::resolve_batch() {
    const auto it = parameters.find("batch");
    batch = it == parameters.end() ? 0.0 : std::atof(it->second.c_str());
}

int workload_graph::add_tensor(tensor_info t) {
    if (static_cast<double>(m_tensors.size()) >= limits().ops)
        fail("workload graph '" + name + "' " +
             over_limit("ops", static_cast<double>(m_tensors.size()) + 1, "tensors or more") +
             "; a smaller workload (fewer layers) needs fewer");
    const int id = static_cast<int>(m_tensors.size());
    m_tensor_index[t.name] = id;
    m_tensors.push_back(std::move(t));
    return id;
}

int workload_graph::find_tensor(const std::string& n) const {
    const auto it = m_tensor_index.find(n);
    return it == m_tensor_index.end() ? -1 : it->second;
}

int workload_graph::add_op(op_node op) {
    if (static_cast<double>(m_ops.size()) >= limits().ops)
        fail("workload graph '" + name + "' " +
             over_limit("ops", static_cast<double>(m_ops.size()) + 1, "ops or more") +
             "; a smaller workload (fewer layers) needs fewer");
    const int id = static_cast<int>(m_ops.size());
    for (int t : op.inputs) m_tensors[static_cast<size_t>(t)].consumers.push_back(id);
    for (int t : op.outputs) m_tensors[static_cast<size_t>(t)].producer = id;
    m_ops.push_back(std::move(op));
    return id;
}

void workload_graph::rebuild() {
    m_g = graph_storage(m_ops.size());
    for (size_t v = 0; v < m_ops.size(); ++v) m_g[v] = static_cast<int>(v);
    for (size_t t = 0; t < m_tensors.size(); ++t) {
        const auto& ti = m_tensors[t];
        if (ti.producer < 0) continue;
        for (int c : ti.consumers) {
            auto e = boost::add_edge(static_cast<size_t>(ti.producer), static_cast<size_t>(c), m_g).first;
            m_g[e] = static_cast<int>(t);
        }
    }
}

void workload_graph::relink() {
    for (auto& t : m_tensors) {
        t.producer = -1;
        t.consumers.clear();
    }
    for (size_t i = 0; i < m_ops.size(); ++i) {
        for (int t : m_ops[i].inputs) {
            auto& c = m_tensors[static_cast<size_t>(t)].consumers;
            // An op reading a tensor twice (x * x) is one consumer.
            if (c.empty() || c.back() != static_cast<int>(i)) c.push_back(static_cast<int>(i));
        }
        for (int t : m_ops[i].outputs) m_tensors[static_cast<size_t>(t)].producer = static_cast<int>(i);
    }
    rebuild();
}

void workload_graph::compact(const std::vector<bool>& keep) {
    std::vector<char> used(m_tensors.size(), 0);
    for (size_t i = 0; i < m_ops.size(); ++i) {
        if (!keep[i]) continue;
        for (int t : m_ops[i].inputs) used[static_cast<size_t>(t)] = 1;
        for (int t : m_ops[i].outputs) used[static_cast<size_t>(t)] = 1;
    }
    std::vector<int> remap(m_tensors.size(), -1);
    std::vector<tensor_info> tensors;
    for (size_t t = 0; t < m_tensors.size(); ++t) {
        if (!used[t]) continue;
        remap[t] = static_cast<int>(tensors.size());
        tensors.push_back(std::move(m_tensors[t]));
    }
    // An alias whose original went away now holds the parameters itself.
    for (auto& t : tensors) {
        if (t.alias_of >= 0) t.alias_of = remap[static_cast<size_t>(t.alias_of)];
        if (t.grad_of >= 0) t.grad_of = remap[static_cast<size_t>(t.grad_of)];
    }
    std::vector<op_node> ops;
    for (size_t i = 0; i < m_ops.size(); ++i) {
        if (!keep[i]) continue;
        op_node o = std::move(m_ops[i]);
        for (int& t : o.inputs) t = remap[static_cast<size_t>(t)];
        for (int& t : o.outputs) t = remap[static_cast<size_t>(t)];
        ops.push_back(std::move(o));
    }
    m_tensors = std::move(tensors);
    m_ops = std::move(ops);
    m_tensor_index.clear();
    for (size_t t = 0; t < m_tensors.size(); ++t) m_tensor_index[m_tensors[t].name] = static_cast<int>(t);
    relink();
}

std::vector<int> workload_graph::graph_outputs() const {
    std::vector<int> out;
    for (size_t t = 0; t < m_tensors.size(); ++t)
        if (m_tensors[t].role == tensor_role::output) out.push_back(static_cast<int>(t));
    return out;
}

std::vector<int> workload_graph::topological_order() const {
    const size_t n = m_ops.size();
    std::vector<int> indeg(n, 0);
    std::vector<std::vector<int>> succ(n);
    for (const auto& t : m_tensors) {
        if (t.producer < 0) continue;
        for (int c : t.consumers) {
            succ[static_cast<size_t>(t.producer)].push_back(c);
            ++indeg[static_cast<size_t>(c)];
        }
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
        if (indeg[i] == 0) ready.push(static_cast<int>(i));
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
        const int v = ready.top();
        ready.pop();
        order.push_back(v);
        for (int s : succ[static_cast<size_t>(v)])
            if (--indeg[static_cast<size_t>(s)] == 0) ready.push(s);
    }
    if (order.size() != n) {
        // Name one cycle. Every op left has a predecessor left (its in-degree is above 0), so walking backwards
        // from any of them must repeat an op; the ops from the repeat on, in data-flow order, are a cycle. (Walking
        // forwards can reach an op downstream of the cycle with no successor left.)
        std::vector<std::vector<int>> pred(n);
        for (size_t u = 0; u < n; ++u)
            if (indeg[u] > 0)
                for (int s : succ[u])
                    if (indeg[static_cast<size_t>(s)] > 0) pred[static_cast<size_t>(s)].push_back(static_cast<int>(u));
        std::vector<int> on_path(n, -1), path;
        int v = -1;
        for (size_t i = 0; i < n; ++i)
            if (indeg[i] > 0) {
                v = static_cast<int>(i);
                break;
            }
        while (on_path[static_cast<size_t>(v)] < 0) {
            on_path[static_cast<size_t>(v)] = static_cast<int>(path.size());
            path.push_back(v);
            v = pred[static_cast<size_t>(v)].front();
        }
        // path[on_path[v]..] walks the cycle against the data flow; print it along the flow, closing at its start.
        std::vector<int> ring(path.begin() + on_path[static_cast<size_t>(v)], path.end());
        std::reverse(ring.begin(), ring.end());
        // Start at the op declared first, so the message reads the same whichever op the walk began from.
        std::rotate(ring.begin(), std::min_element(ring.begin(), ring.end()), ring.end());
        std::string cycle;
        for (int u : ring) cycle += m_ops[static_cast<size_t>(u)].name + " -> ";
        cycle += m_ops[static_cast<size_t>(ring.front())].name;
        v = ring.front();
        throw input_error("workload graph '" + name + "' has a cycle: " + cycle, m_ops[static_cast<size_t>(v)].where);
    }
    return order;
}

op_cost workload_graph::total() const {
    op_cost c;
    for (const auto& o : m_ops) {
        c.macs += o.cost.macs;
        c.flops += o.cost.flops;
        c.bytes_in += o.cost.bytes_in;
        c.bytes_weight += o.cost.bytes_weight;
        c.bytes_out += o.cost.bytes_out;
        c.params += o.cost.params;
    }
    return c;
}

double workload_graph::parameter_count() const {
    double p = 0;
    for (const auto& t : m_tensors)
        if (t.role == tensor_role::weight && t.alias_of < 0) p += static_cast<double>(t.elements());
    return p;
}

}  // namespace tessel
