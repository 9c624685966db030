#include "engine/workload/passes.h"

#include <algorithm>

#include "engine/workload/cost.h"

namespace tessel {

critical_path_result critical_path(const workload_graph& g, const std::function<double(const op_node&)>& weight) {
    const auto order = g.topological_order();
    const size_t n = g.ops().size();
    std::vector<double> best(n, 0);
    std::vector<int> prev(n, -1);
    for (int v : order) {
        const auto& op = g.op(v);
        double in_best = 0;
        int in_prev = -1;
        for (int t : op.inputs) {
            const int p = g.tensor(t).producer;
            if (p < 0) continue;
            const double b = best[static_cast<size_t>(p)];
            if (in_prev < 0 || b > in_best || (b == in_best && p < in_prev)) {
                in_best = b;
                in_prev = p;
            }
        }
        best[static_cast<size_t>(v)] = in_best + weight(op);
        prev[static_cast<size_t>(v)] = in_prev;
    }
    critical_path_result r;
    int end = -1;
    for (size_t v = 0; v < n; ++v)
        if (end < 0 || best[v] > best[static_cast<size_t>(end)]) end = static_cast<int>(v);
    if (end < 0) return r;
    r.weight = best[static_cast<size_t>(end)];
    for (int v = end; v >= 0; v = prev[static_cast<size_t>(v)]) r.ops.push_back(v);
    std::reverse(r.ops.begin(), r.ops.end());
    return r;
}

critical_path_result critical_path(const workload_graph& g) {
    return critical_path(g, [](const op_node& op) { return op.cost.flops; });
}

int remove_dead_ops(workload_graph& g) {
    const size_t n = g.ops().size();
    std::vector<bool> live(n, false);
    std::vector<int> work;
    for (const auto& t : g.tensors())
        if (t.role == tensor_role::output && t.producer >= 0 && !live[static_cast<size_t>(t.producer)]) {
            live[static_cast<size_t>(t.producer)] = true;
            work.push_back(t.producer);
        }
    while (!work.empty()) {
        const int v = work.back();
        work.pop_back();
        for (int t : g.op(v).inputs) {
            const int p = g.tensor(t).producer;
            if (p >= 0 && !live[static_cast<size_t>(p)]) {
                live[static_cast<size_t>(p)] = true;
                work.push_back(p);
            }
        }
    }
    const int removed = static_cast<int>(std::count(live.begin(), live.end(), false));
    if (removed > 0) g.compact(live);
    return removed;
}

namespace {

bool can_host(const op_node& p) {
    switch (p.kind) {
        case op_kind::matmul:
        case op_kind::conv2d:
        case op_kind::elementwise:
        case op_kind::layernorm:
        case op_kind::batchnorm:
        case op_kind::pool:
        case op_kind::attention:
            return p.outputs.size() == 1;
        default:
            return false;
    }
}

/// Elementwise ops that keep their input's type and are worth fusing (not casts, comparisons or copies).
bool fusable(const op_node& e) {
    if (e.kind != op_kind::elementwise || !e.fused.empty() || e.outputs.size() != 1) return false;
    static const char* const excluded[] = {"cast", "expand", "equal", "less", "less_equal", "greater", "greater_equal",
                                           "and",  "or",     "xor",   "not",  "isnan",      "copy",    "loss_grad"};
    for (const char* x : excluded)
        if (e.type == x) return false;
    return true;
}

}  // namespace

int fuse_elementwise(workload_graph& g) {
    g.relink();
    const auto order = g.topological_order();
    std::vector<bool> keep(g.ops().size(), true);
    int fused = 0;
    for (int v : order) {
        op_node& e = g.ops()[static_cast<size_t>(v)];
        if (!fusable(e)) continue;
        // The first input produced by a host op with this op as its only reader.
        for (size_t i = 0; i < e.inputs.size(); ++i) {
            const int t = e.inputs[i];
            const auto& ti = g.tensor(t);
            if (ti.producer < 0 || ti.role != tensor_role::activation) continue;
            if (std::count(e.inputs.begin(), e.inputs.end(), t) != 1 || ti.consumers.size() != 1) continue;
            op_node& p = g.ops()[static_cast<size_t>(ti.producer)];
            if (!keep[static_cast<size_t>(ti.producer)] || !can_host(p) || p.phase != e.phase) continue;
            const auto& out = g.tensor(e.outputs[0]);
            if (out.shape != ti.shape || out.type != ti.type) continue;
            fused_op f;
            f.name = e.name;
            f.type = e.type;
            for (size_t j = 0; j < e.inputs.size(); ++j)
                if (j != i) {
                    p.inputs.push_back(e.inputs[j]);
                    ++f.extra_inputs;
                }
            p.fused.push_back(f);
            p.outputs[0] = e.outputs[0];
            // The host now writes this op's result; later ops see it as its producer.
            g.tensors()[static_cast<size_t>(e.outputs[0])].producer = ti.producer;
            for (int x : e.inputs)
                if (x != t) g.tensors()[static_cast<size_t>(x)].consumers.push_back(ti.producer);
            keep[static_cast<size_t>(v)] = false;
            ++fused;
            break;
        }
    }
    if (fused > 0) {
        g.compact(keep);
        compute_costs(g);
    }
    return fused;
}

}  // namespace tessel
