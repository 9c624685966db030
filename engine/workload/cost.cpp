#include "engine/workload/cost.h"

#include <algorithm>

#include "engine/workload/op_types.h"

namespace tessel {

namespace {

double elems(const tensor_info& t) { return static_cast<double>(t.elements()); }

std::int64_t prod(const std::vector<std::int64_t>& s, size_t from, size_t to) {
    std::int64_t p = 1;
    for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
    return p;
}

/// Bytes of the op's tensors as they are read and written: weights apart from activations.
void tensor_bytes(const workload_graph& g, const op_node& op, op_cost& c) {
    for (int t : op.inputs) {
        const auto& ti = g.tensor(t);
        if (ti.role == tensor_role::weight) {
            c.bytes_weight += static_cast<double>(ti.bytes());
            c.params += elems(ti);
        } else {
            c.bytes_in += static_cast<double>(ti.bytes());
        }
    }
    for (int t : op.outputs) c.bytes_out += static_cast<double>(g.tensor(t).bytes());
}

void matmul_cost(const workload_graph& g, const op_node& op, op_cost& c) {
    auto a = g.tensor(op.inputs[0]).shape, b = g.tensor(op.inputs[1]).shape;
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    if (attr_int(op, "transpose_a")) std::swap(a[a.size() - 1], a[a.size() - 2]);
    if (attr_int(op, "transpose_b")) std::swap(b[b.size() - 1], b[b.size() - 2]);
    const std::int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
    // Batch = elements of the broadcast batch axes.
    std::int64_t batch = 1;
    const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
    for (size_t i = 0; i < r; ++i) {
        const std::int64_t x = i < r - ra ? 1 : a[i - (r - ra)];
        const std::int64_t y = i < r - rb ? 1 : b[i - (r - rb)];
        batch *= std::max(x, y);
    }
    c.macs = static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    c.flops = 2 * c.macs;
    if (op.own_inputs() == 3) c.flops += elems(g.tensor(op.outputs[0]));  // bias add
    c.m = m;
    c.n = n;
    c.k = k;
    c.batch = batch;
    if (attr_int(op, "accumulate_batch")) {
        // Weight gradient: the batch axes are summed, one GEMM with a longer K.
        c.k = k * batch;
        c.batch = 1;
    } else if (rb == 0 && !attr_int(op, "transpose_a")) {
        // A weight shared by every batch row: one GEMM with the batch folded into M.
        c.m = m * batch;
        c.batch = 1;
    }
}

/// conv2d and its two backward ops share the forward geometry: x [N, C, H, W], w [OC, C/g, KH, KW], y.
void conv_cost(const workload_graph& g, const op_node& op, op_cost& c) {
    std::vector<std::int64_t> x, w, y;
    if (op.type == "conv2d") {
        x = g.tensor(op.inputs[0]).shape;
        w = g.tensor(op.inputs[1]).shape;
        y = g.tensor(op.outputs[0]).shape;
    } else if (op.type == "conv2d_grad_input") {
        x = attr_ints(op, "input_shape");
        w = g.tensor(op.inputs[1]).shape;
        y = g.tensor(op.inputs[0]).shape;
    } else {
        x = g.tensor(op.inputs[0]).shape;
        w = attr_ints(op, "weight_shape");
        y = g.tensor(op.inputs[1]).shape;
    }
    const std::int64_t groups = attr_int(op, "groups", 1);
    const std::int64_t spatial_out = y[0] * y[2] * y[3];  // N * OH * OW
    const std::int64_t oc_g = w[0] / groups;              // output channels per group
    const std::int64_t k_g = w[1] * w[2] * w[3];          // C/g * KH * KW
    c.macs = static_cast<double>(groups) * static_cast<double>(spatial_out) * static_cast<double>(oc_g) *
             static_cast<double>(k_g);
    c.flops = 2 * c.macs;
    c.batch = groups;
    if (op.type == "conv2d") {
        c.m = spatial_out;
        c.n = oc_g;
        c.k = k_g;
        if (op.own_inputs() == 3) c.flops += elems(g.tensor(op.outputs[0]));
    } else if (op.type == "conv2d_grad_input") {
        // dx columns = w^T . dy, then col2im: M = N*OH*OW, N = C/g*KH*KW, K = OC/g.
        c.m = spatial_out;
        c.n = k_g;
        c.k = oc_g;
    } else {
        // dw = dy . x_columns^T: M = OC/g, N = C/g*KH*KW, K = N*OH*OW.
        c.m = oc_g;
        c.n = k_g;
        c.k = spatial_out;
    }
}

void attention_cost(const workload_graph& g, const op_node& op, op_cost& c, bool grad) {
    // Forward: q, k, v (+ mask). Backward: do, q, k, v.
    const size_t base = grad ? 1 : 0;
    const auto& q = g.tensor(op.inputs[base]).shape;
    const auto& k = g.tensor(op.inputs[base + 1]).shape;
    const auto& v = g.tensor(op.inputs[base + 2]).shape;
    const double scores = static_cast<double>(q[0] * q[1] * q[2] * k[2]);
    const double d = static_cast<double>(q[3]), dv = static_cast<double>(v[3]);
    // Forward: S = Q K^T and O = P V. Backward recomputes S, then dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q.
    c.macs = scores * (grad ? 3 * d + 2 * dv : d + dv);
    const op_type_info* info = find_op_type("attention");
    c.flops = 2 * c.macs + scores * (grad ? info->grad_flops_per_element + 1 : info->flops_per_element);
    if (!grad && op.own_inputs() == 4) c.flops += scores;  // mask add
    c.batch = q[0] * q[1];
    c.m = q[2];
    c.n = k[2];
    c.k = q[3] + v[3];
}

}  // namespace

op_cost compute_cost(const workload_graph& g, const op_node& op) {
    op_cost c;
    c.cls = op_class_of(op.kind);
    if (op.kind == op_kind::shape_only) return c;
    const op_type_info* info = op.kind == op_kind::generic ? find_op_type("generic") : find_op_type(op.type);
    if (!info) fail(describe_op(op) + ": unknown op type", op.where);
    const bool grad = is_grad_type(op.type);
    const double out0 = op.outputs.empty() ? 0 : elems(g.tensor(op.outputs[0]));

    // Bytes: what the op reads and writes, with the exceptions of views and index-based reads.
    switch (op.kind) {
        case op_kind::reshape:
            break;  // a view: nothing moves
        case op_kind::concat:
        case op_kind::split:
            // Parts of one packed buffer are views of it; otherwise every element is copied.
            if (!grad && attr_int(op, "packed", 0) == 1) break;
            tensor_bytes(g, op, c);
            break;
        case op_kind::embedding:
            if (!grad) {
                const auto& table = g.tensor(op.inputs[0]);
                c.bytes_in = static_cast<double>(g.tensor(op.inputs[1]).bytes());
                // Only the looked-up rows are read.
                c.bytes_weight = static_cast<double>(dtype_bytes(table.type, static_cast<std::uint64_t>(out0)));
                if (table.role == tensor_role::weight) {
                    c.params = elems(table);
                } else {
                    c.bytes_in += c.bytes_weight;  // a table that is not a parameter (an activation)
                    c.bytes_weight = 0;
                }
                c.bytes_out = static_cast<double>(g.tensor(op.outputs[0]).bytes());
            } else {
                // dtable: scatter-add of dy rows into a dense gradient; the table itself is not read.
                c.bytes_in = static_cast<double>(g.tensor(op.inputs[0]).bytes());
                for (int t : op.outputs) c.bytes_out += static_cast<double>(g.tensor(t).bytes());
            }
            break;
        case op_kind::gather:
        case op_kind::slice:
            if (!grad) {
                // Reads the selected elements (and the indices), not the whole input.
                const auto& data = g.tensor(op.inputs[0]);
                const double sel = static_cast<double>(dtype_bytes(data.type, static_cast<std::uint64_t>(out0)));
                if (data.role == tensor_role::weight) {
                    c.bytes_weight = sel;
                    c.params = elems(data);
                } else {
                    c.bytes_in = sel;
                }
                if (op.kind == op_kind::gather) c.bytes_in += static_cast<double>(g.tensor(op.inputs[1]).bytes());
                c.bytes_out = static_cast<double>(g.tensor(op.outputs[0]).bytes());
                break;
            }
            tensor_bytes(g, op, c);
            break;
        default:
            tensor_bytes(g, op, c);
    }
    if (grad) c.params = 0;  // a backward op reads parameters but does not own them

    // FLOPs.
    if (op.type == "matmul")
        matmul_cost(g, op, c);
    else if (op.kind == op_kind::conv2d)
        conv_cost(g, op, c);
    else if (op.kind == op_kind::attention)
        attention_cost(g, op, c, grad);
    else if (grad) {
        // Backward ops work per element of the larger of the output gradient and the input gradient.
        const double dy = elems(g.tensor(op.inputs[0]));
        c.flops = info->grad_flops_per_element * std::max(dy, out0);
    } else {
        switch (op.kind) {
            case op_kind::pool: {
                const auto& x = g.tensor(op.inputs[0]).shape;
                double taps;
                if (op.type == "global_avg_pool" || op.type == "global_max_pool") {
                    taps = static_cast<double>(prod(x, 2, x.size()));
                } else {
                    const auto k = attr_ints(op, "kernel");
                    taps = static_cast<double>(k[0] * k[1]);
                }
                const bool is_max = op.type == "max_pool" || op.type == "global_max_pool";
                c.flops = out0 * (is_max ? taps - 1 : taps);
                break;
            }
            case op_kind::elementwise:
                c.flops = info->flops_per_element * out0;
                break;
            case op_kind::reduce: {
                c.flops = info->flops_per_element * elems(g.tensor(op.inputs[0]));
                if (op.type == "reduce_mean") c.flops += out0;
                break;
            }
            case op_kind::softmax:
            case op_kind::batchnorm:
                c.flops = info->flops_per_element * out0;
                break;
            case op_kind::layernorm:
                // +1 per element for each of scale and bias that is present.
                c.flops = (info->flops_per_element + static_cast<double>(op.own_inputs() - 1)) * out0;
                break;
            case op_kind::collective: {
                const double ranks = static_cast<double>(attr_int(op, "ranks", 1));
                c.flops = info->flops_per_element * elems(g.tensor(op.inputs[0])) * (ranks - 1) / ranks;
                break;
            }
            case op_kind::optimizer: {
                double per = info->flops_per_element;
                if (op.type == "sgd" && op.own_inputs() >= 3) per += 2;   // momentum buffer
                if (op.type == "sgd" && op.own_inputs() == 4) per += 1;   // master copy rounding
                if (op.type == "adam" && op.own_inputs() == 5) per += 1;  // master copy rounding
                c.flops = per * elems(g.tensor(op.inputs[0]));
                break;
            }
            case op_kind::generic:
                c.flops = attr_number(op, "flops_per_element") * out0;
                break;
            default:
                break;  // embedding, gather and data movement: bytes only
        }
    }
    // Fused epilogue ops apply to the first output.
    for (const auto& f : op.fused) {
        const op_type_info* fi = find_op_type(f.type);
        if (fi) c.flops += fi->flops_per_element * out0;
    }
    return c;
}

void compute_costs(workload_graph& g) {
    for (auto& op : g.ops()) op.cost = compute_cost(g, op);
}

}  // namespace tessel
