#include "engine/mappers/eager_kernels.h"

#include <algorithm>
#include <cmath>

#include "engine/workload/op_types.h"
#include "engine/workload/training.h"

namespace tessel {

lowered_kernel stream_kernel(int o, std::string name, op_class cls, dtype type, std::vector<kernel_operand> operands,
                             double vector_ops, double special) {
    lowered_kernel k;
    k.ops = {o};
    k.w.type = type;
    k.w.cls = cls;
    k.w.vector_ops = vector_ops;
    for (const auto& x : operands) (x.write ? k.w.bytes_out : k.w.bytes_in) += x.bytes;
    k.desc.name = std::move(name);
    k.desc.operands = std::move(operands);
    k.desc.special_ops = special;
    k.own_name = true;
    return k;
}

namespace {

double bytes_of(std::int64_t elements, dtype t) { return static_cast<double>(elements) * dtype_bits(t) / 8.0; }

/// Makes kernel `k` a row-wise one: `rows` rows of `cols`, `passes` dependent passes, `rereads` extra reads.
void rowwise(lowered_kernel& k, std::int64_t rows, std::int64_t cols, int passes, int rereads) {
    k.desc.rows = std::max<std::int64_t>(1, rows);
    k.desc.cols = std::max<std::int64_t>(1, cols);
    k.desc.passes = passes;
    k.desc.rereads = rereads;
}

// --- convolutions: cuDNN's NCHW <-> NHWC conversions -------------------------------------------------------

/// Whether cuDNN runs this convolution on NHWC copies (h100_framework.jsonl: every NCHW convolution of
/// ResNet-50 converts its input to NHWC and its output back, except 1x1 stride-1 ones over at least 14x14
/// outputs, which cuBLAS runs as a GEMM on the NCHW data).
bool converts_layout(const std::vector<std::int64_t>& w, const std::vector<std::int64_t>& y, const op_node& op) {
    if (w.size() != 4 || y.size() != 4) return false;
    const auto stride = attr_ints(op, "stride");
    const bool unit_stride = std::all_of(stride.begin(), stride.end(), [](std::int64_t s) { return s == 1; });
    const bool pointwise = w[2] == 1 && w[3] == 1 && unit_stride;
    return !(pointwise && y[2] * y[3] >= std::int64_t{14} * 14);
}

std::vector<lowered_kernel> conv_kernels(const workload_graph& g, int o, const eager_storage& s,
                                         std::optional<dtype> ct) {
    const op_node& op = g.op(o);
    std::vector<std::int64_t> w, y;
    std::vector<int> to_nhwc;  // inputs cuDNN converts; the output (when converted) goes back to NCHW
    bool output_back = false;
    if (op.type == "conv2d") {
        w = g.tensor(op.inputs[1]).shape;
        y = g.tensor(op.outputs[0]).shape;
        to_nhwc = {op.inputs[0]};
        output_back = true;
    } else if (op.type == "conv2d_grad_input") {
        w = g.tensor(op.inputs[1]).shape;
        y = g.tensor(op.inputs[0]).shape;
        to_nhwc = {op.inputs[0]};
        output_back = true;
    } else if (op.type == "conv2d_grad_weight") {
        w = attr_ints(op, "weight_shape");
        y = g.tensor(op.inputs[1]).shape;
        to_nhwc = {op.inputs[0], op.inputs[1]};
    } else {
        return {};
    }
    if (!converts_layout(w, y, op)) return {};
    std::vector<lowered_kernel> ks;
    std::vector<std::pair<int, std::uint64_t>> moved;  // tensor, its NHWC copy
    for (int t : to_nhwc) {
        const double b = s.bytes(g, t);
        const std::uint64_t copy = s.scratch(b);
        moved.emplace_back(t, copy);
        ks.push_back(stream_kernel(o, op.name + ".nchw_to_nhwc", op_class::data_movement, s.type(g, t),
                                   {{s.tensor(t), b, false}, {copy, b, true}}));
    }
    const int out = op.outputs[0];
    const double out_bytes = s.bytes(g, out);
    const std::uint64_t out_copy = output_back ? s.scratch(out_bytes) : 0;
    ks.push_back(lower_op(
        g, o,
        [&](int t) {
            for (const auto& [from, to] : moved)
                if (from == t) return to;
            if (output_back && t == out) return out_copy;
            return s.tensor(t);
        },
        ct, s.type_of));
    if (output_back)
        ks.push_back(stream_kernel(o, op.name + ".nhwc_to_nchw", op_class::data_movement, s.type(g, out),
                                   {{out_copy, out_bytes, false}, {s.tensor(out), out_bytes, true}}));
    return ks;
}

// --- batch norm: one CTA per channel for statistics and gradients -------------------------------------------

std::vector<lowered_kernel> batchnorm_kernels(const workload_graph& g, int o, const eager_storage& s,
                                              std::optional<dtype> ct) {
    const op_node& op = g.op(o);
    if (op.inputs.empty() || op.outputs.empty()) return {};
    const int x = op.inputs[0];
    const auto& xs = g.tensor(x).shape;
    if (xs.size() < 2) return {};
    const std::int64_t channels = xs[1];
    const std::int64_t per_channel =
        std::max<std::int64_t>(1, g.tensor(x).elements() / std::max<std::int64_t>(1, channels));
    const double stats = bytes_of(2 * channels, dtype::fp32);
    if (op.phase == op_phase::backward) {
        // batch_norm_backward_kernel: each channel's CTA sums dy and dy*x-hat over the channel, then writes dx
        // (a second read of x and dy).
        lowered_kernel k = lower_op(g, o, s.tensor, ct, s.type_of);
        rowwise(k, channels, per_channel, 2, 1);
        return {k};
    }
    const std::uint64_t st = s.scratch(stats);
    const dtype t = s.type(g, x);
    const double xb = s.bytes(g, x);
    const int y = op.outputs[0];
    std::vector<lowered_kernel> ks;
    if (is_training_step(g)) {
        // batch_norm_collect_statistics_kernel (one CTA per channel, Welford), the running-statistics update,
        // then batch_norm_transform_input_kernel over every element.
        lowered_kernel stat =
            stream_kernel(o, op.name + ".statistics", op_class::norm, t, {{s.tensor(x), xb, false}, {st, stats, true}},
                          2.0 * static_cast<double>(g.tensor(x).elements()), static_cast<double>(channels));
        rowwise(stat, channels, per_channel, 1, 0);
        ks.push_back(stat);
        ks.push_back(stream_kernel(o, op.name + ".running_stats", op_class::elementwise, dtype::fp32,
                                   {{st, stats, false}, {st, stats, true}}, 4.0 * static_cast<double>(channels)));
    } else {
        // batch_norm_calc_invstd over the channels and a copy of the channel parameters, then the transform.
        ks.push_back(stream_kernel(o, op.name + ".invstd", op_class::elementwise, dtype::fp32,
                                   {{st, stats / 2, false}, {st, stats / 2, true}}, static_cast<double>(channels),
                                   static_cast<double>(channels)));
        ks.push_back(
            stream_kernel(o, op.name + ".params", op_class::data_movement, dtype::fp32,
                          {{st, stats / 2, false}, {st + static_cast<std::uint64_t>(stats / 2), stats / 2, true}}));
    }
    const double yb = s.bytes(g, y);
    ks.push_back(stream_kernel(o, op.name + ".transform", op_class::norm, t,
                               {{s.tensor(x), xb, false}, {st, stats, false}, {s.tensor(y), yb, true}},
                               2.0 * static_cast<double>(g.tensor(x).elements())));
    return ks;
}

// --- Hugging Face RMSNorm: an fp32 copy, pow, mean, add, rsqrt, two multiplies, a copy back ---------------

std::vector<lowered_kernel> rmsnorm_kernels(const workload_graph& g, int o, const eager_storage& s) {
    const op_node& op = g.op(o);
    if (op.type != "rmsnorm" || op.phase != op_phase::forward || op.inputs.empty() || op.outputs.empty()) return {};
    const int x = op.inputs[0];
    const auto& xs = g.tensor(x).shape;
    if (xs.empty()) return {};
    const std::int64_t n = g.tensor(x).elements();
    const std::int64_t cols = std::max<std::int64_t>(1, xs.back());
    const std::int64_t rows = std::max<std::int64_t>(1, n / cols);
    const dtype t = s.type(g, x);
    const double full32 = bytes_of(n, dtype::fp32), full = bytes_of(n, t), row32 = bytes_of(rows, dtype::fp32);
    const std::uint64_t h = s.scratch(full32), sq = s.scratch(full32), var = s.scratch(row32),
                        var_eps = s.scratch(row32), inv = s.scratch(row32), hn = s.scratch(full32),
                        back = s.scratch(full);
    const double en = static_cast<double>(n), er = static_cast<double>(rows);
    std::vector<lowered_kernel> ks;
    ks.push_back(stream_kernel(o, op.name + ".to_fp32", op_class::data_movement, dtype::fp32,
                               {{s.tensor(x), full, false}, {h, full32, true}}));
    ks.push_back(stream_kernel(o, op.name + ".pow", op_class::elementwise, dtype::fp32,
                               {{h, full32, false}, {sq, full32, true}}, en));
    lowered_kernel mean = stream_kernel(o, op.name + ".mean", op_class::reduction, dtype::fp32,
                                        {{sq, full32, false}, {var, row32, true}}, en);
    rowwise(mean, rows, cols, 1, 0);
    ks.push_back(mean);
    ks.push_back(stream_kernel(o, op.name + ".add_eps", op_class::elementwise, dtype::fp32,
                               {{var, row32, false}, {var_eps, row32, true}}, er));
    ks.push_back(stream_kernel(o, op.name + ".rsqrt", op_class::elementwise, dtype::fp32,
                               {{var_eps, row32, false}, {inv, row32, true}}, 0, er));
    ks.push_back(stream_kernel(o, op.name + ".normalise", op_class::elementwise, dtype::fp32,
                               {{h, full32, false}, {inv, row32, false}, {hn, full32, true}}, en));
    ks.push_back(stream_kernel(o, op.name + ".to_" + std::string(dtype_name(t)), op_class::data_movement, t,
                               {{hn, full32, false}, {back, full, true}}));
    std::vector<kernel_operand> scale = {{back, full, false}};
    if (op.inputs.size() > 1) scale.push_back({s.tensor(op.inputs[1]), s.bytes(g, op.inputs[1]), false});
    scale.push_back({s.tensor(op.outputs[0]), s.bytes(g, op.outputs[0]), true});
    ks.push_back(stream_kernel(o, op.name + ".scale", op_class::elementwise, t, scale, en));
    return ks;
}

// --- GELU's tanh form as model code writes it (Hugging Face's gelu_new, GPT-2's activation) -----------------

/// One elementwise kernel of n elements of type t: reads `in`, writes `out`.
lowered_kernel elementwise(int o, const std::string& name, dtype t, std::int64_t n,
                           const std::vector<std::uint64_t>& in, std::uint64_t out, double special = 0) {
    const double b = bytes_of(n, t);
    std::vector<kernel_operand> ops;
    ops.reserve(in.size() + 1);
    for (std::uint64_t a : in) ops.push_back({a, b, false});
    ops.push_back({out, b, true});
    return stream_kernel(o, name, op_class::elementwise, t, std::move(ops), static_cast<double>(n),
                         special * static_cast<double>(n));
}

std::vector<lowered_kernel> gelu_tanh_kernels(const workload_graph& g, int o, const eager_storage& s) {
    const op_node& op = g.op(o);
    if (attr_text(op, "approximate", "none") != "tanh" || op.outputs.empty()) return {};
    const int y = op.outputs[0];
    const std::int64_t n = g.tensor(y).elements();
    const dtype t = s.type(g, y);  // under autocast fp32: pow is on its float32 list, and the chain promotes
    auto tmp = [&] { return s.scratch(bytes_of(n, t)); };
    const std::string& nm = op.name;
    std::vector<lowered_kernel> ks;
    if (op.phase != op_phase::backward) {
        // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): eight kernels, each a tensor in and out.
        const std::uint64_t x = s.tensor(op.inputs[0]), a = tmp(), b = tmp(), c = tmp(), d = tmp(), e = tmp(),
                            f = tmp(), h = tmp();
        ks.push_back(elementwise(o, nm + ".pow3", t, n, {x}, a, 1));
        ks.push_back(elementwise(o, nm + ".mul_coef", t, n, {a}, b));
        ks.push_back(elementwise(o, nm + ".add_x", t, n, {x, b}, c));
        ks.push_back(elementwise(o, nm + ".mul_sqrt_2_pi", t, n, {c}, d));
        ks.push_back(elementwise(o, nm + ".tanh", t, n, {d}, e, 1));
        ks.push_back(elementwise(o, nm + ".add_one", t, n, {e}, f));
        ks.push_back(elementwise(o, nm + ".mul_half_x", t, n, {x}, h));
        ks.push_back(elementwise(o, nm + ".mul", t, n, {h, f}, s.tensor(y)));
        return ks;
    }
    // Autograd through the same chain: d(g*f) is two multiplies, the scalar multiplies one each, tanh_backward
    // one, pow's backward three (x^2, times 3, times the gradient), and x's three gradients two adds. The
    // forward's saved tensors (f, g = x/2, tanh's output) are read from where the forward left them.
    if (op.inputs.size() < 2) return {};
    const std::uint64_t dy = s.tensor(op.inputs[0]), x = s.tensor(op.inputs[1]), f = tmp(), half = tmp(), e = tmp();
    const std::uint64_t dg = tmp(), df = tmp(), dx1 = tmp(), dd = tmp(), dc = tmp(), da = tmp(), p = tmp(), p3 = tmp(),
                        dx3 = tmp(), acc = tmp();
    ks.push_back(elementwise(o, nm + ".grad_mul_f", t, n, {dy, f}, dg));
    ks.push_back(elementwise(o, nm + ".grad_mul_half_x", t, n, {dy, half}, df));
    ks.push_back(elementwise(o, nm + ".grad_half", t, n, {dg}, dx1));
    ks.push_back(elementwise(o, nm + ".tanh_backward", t, n, {df, e}, dd));
    ks.push_back(elementwise(o, nm + ".grad_sqrt_2_pi", t, n, {dd}, dc));
    ks.push_back(elementwise(o, nm + ".grad_coef", t, n, {dc}, da));
    ks.push_back(elementwise(o, nm + ".pow2", t, n, {x}, p, 1));
    ks.push_back(elementwise(o, nm + ".mul_three", t, n, {p}, p3));
    ks.push_back(elementwise(o, nm + ".grad_pow", t, n, {da, p3}, dx3));
    ks.push_back(elementwise(o, nm + ".grad_add", t, n, {dx1, dc}, acc));
    ks.push_back(elementwise(o, nm + ".grad_sum", t, n, {acc, dx3}, s.tensor(op.outputs[0])));
    return ks;
}

// --- dropout: fused_dropout writes a 1-byte mask beside its output; the backward pass reads the mask ---------

std::vector<lowered_kernel> dropout_kernels(const workload_graph& g, int o, const eager_storage& s,
                                            std::optional<dtype> ct) {
    const op_node& op = g.op(o);
    if (op.outputs.empty() || op.inputs.empty()) return {};
    const double mask = static_cast<double>(g.tensor(op.outputs[0]).elements());  // one byte per element
    lowered_kernel k = lower_op(g, o, s.tensor, ct, s.type_of);
    if (op.phase != op_phase::backward) {
        k.desc.operands.push_back({s.scratch(mask), mask, true});
        k.w.bytes_out += mask;
        return {k};
    }
    // dropout_grad reads dy and (in the graph) x; PyTorch reads the mask instead of x.
    if (op.inputs.size() < 2) return {};
    const std::uint64_t x = s.tensor(op.inputs[1]);
    for (auto& e : k.desc.operands)
        if (!e.write && e.address == x) {
            k.w.bytes_in -= e.bytes - mask;
            e.bytes = mask;
        }
    return {k};
}

// --- cross-entropy on an fp32 copy of the logits, forward and backward --------------------------------------

std::vector<lowered_kernel> cross_entropy_kernels(const workload_graph& g, int o, const eager_storage& s) {
    const op_node& op = g.op(o);
    if (op.type != "loss_grad" || op.inputs.empty() || op.outputs.empty()) return {};
    const int logits = op.inputs[0];
    // Logits: [samples, classes] or [batch, tokens, vocabulary]; a loss over other outputs is not cross-entropy.
    const auto& ls = g.tensor(logits).shape;
    if (ls.size() < 2 || ls.size() > 3 || ls.back() < 2) return {};
    const std::int64_t n = g.tensor(logits).elements();
    const std::int64_t classes = ls.back(), rows = std::max<std::int64_t>(1, n / classes);
    const double full = s.bytes(g, logits), full32 = bytes_of(n, dtype::fp32), row32 = bytes_of(rows, dtype::fp32),
                 targets = bytes_of(rows, dtype::int64);
    const std::uint64_t up = s.scratch(full32), logp = s.scratch(full32), loss = s.scratch(row32),
                        target = s.scratch(targets), dlogp = s.scratch(full32), dup = s.scratch(full32);
    const double en = static_cast<double>(n);
    // As add_row_info picks PyTorch's softmax kernels: a warp per row up to 1024 classes (one pass), rows over
    // 48 KiB read three times.
    const int passes = classes <= 1024 ? 1 : 2;
    const bool long_rows = full32 / static_cast<double>(rows) > 48.0 * 1024;
    std::vector<lowered_kernel> ks;
    // Forward: logits.float(), log_softmax (cunn_SoftMaxForward), nll_loss over the targets.
    ks.push_back(stream_kernel(o, op.name + ".to_fp32", op_class::data_movement, dtype::fp32,
                               {{s.tensor(logits), full, false}, {up, full32, true}}));
    lowered_kernel lsm = stream_kernel(o, op.name + ".log_softmax", op_class::softmax, dtype::fp32,
                                       {{up, full32, false}, {logp, full32, true}}, 3 * en, en);
    rowwise(lsm, rows, classes, passes, long_rows ? 2 : 0);
    ks.push_back(lsm);
    ks.push_back(stream_kernel(o, op.name + ".nll", op_class::reduction, dtype::fp32,
                               {{target, targets, false}, {logp, row32, false}, {loss, bytes_of(1, dtype::fp32), true}},
                               static_cast<double>(rows)));
    // Backward: nll_loss_backward zero-fills the fp32 gradient and scatters -1/rows at the targets,
    // log_softmax_backward (cunn_SoftMaxBackward: g - exp(logp) * sum(g)), then the copy back to the logits' type.
    ks.push_back(
        stream_kernel(o, op.name + ".nll_grad_fill", op_class::data_movement, dtype::fp32, {{dlogp, full32, true}}));
    ks.push_back(stream_kernel(o, op.name + ".nll_grad", op_class::data_movement, dtype::fp32,
                               {{target, targets, false}, {dlogp, row32, true}}, static_cast<double>(rows)));
    lowered_kernel lsb =
        stream_kernel(o, op.name + ".log_softmax_grad", op_class::softmax, dtype::fp32,
                      {{dlogp, full32, false}, {logp, full32, false}, {dup, full32, true}}, 3 * en, en);
    rowwise(lsb, rows, classes, passes, long_rows ? 1 : 0);
    ks.push_back(lsb);
    const int dx = op.outputs[0];
    ks.push_back(stream_kernel(o, op.name + ".to_" + std::string(dtype_name(s.type(g, dx))), op_class::data_movement,
                               s.type(g, dx), {{dup, full32, false}, {s.tensor(dx), s.bytes(g, dx), true}}));
    return ks;
}

}  // namespace

namespace {

bool is_float(dtype t) {
    return t == dtype::fp32 || t == dtype::tf32 || t == dtype::fp16 || t == dtype::bf16 || t == dtype::fp8;
}

/// Ops autocast runs in the 16-bit type (its lower-precision list: matrix products, convolutions, attention).
bool autocast_low(op_kind k) { return k == op_kind::matmul || k == op_kind::conv2d || k == op_kind::attention; }

/// Ops autocast runs in fp32 (its float32 list: layer_norm, softmax, log_softmax, sum, mean, prod, norm).
bool autocast_fp32(const op_node& op) {
    if (op.kind == op_kind::softmax) return true;
    if (op.kind == op_kind::layernorm) return op.type == "layernorm" || op.type == "layernorm_grad";
    if (op.kind == op_kind::reduce)
        return op.type == "reduce_sum" || op.type == "reduce_mean" || op.type == "reduce_prod" ||
               op.type == "reduce_l2";
    return false;
}

}  // namespace

autocast_plan plan_autocast(const workload_graph& g) {
    autocast_plan p;
    const auto pr = g.parameters.find("precision");
    if (!is_training_step(g) || pr == g.parameters.end()) return p;
    const auto low = parse_dtype(pr->second);
    if (!low || dtype_bits(*low) >= 32 || !is_float(*low)) return p;
    // Master weights: the optimizer's last input (the training expansion keeps fp32 copies at 16-bit precision).
    std::vector<int> master(g.tensors().size(), -1);
    for (const op_node& op : g.ops())
        if (op.kind == op_kind::optimizer && op.inputs.size() >= 3 && g.tensor(op.inputs.back()).type == dtype::fp32 &&
            g.tensor(op.inputs.back()).name == g.tensor(op.inputs[0]).name + ".master")
            master[static_cast<size_t>(op.inputs[0])] = op.inputs.back();
    p.active = true;
    p.low = *low;
    p.held.resize(g.tensors().size());
    for (size_t t = 0; t < g.tensors().size(); ++t) p.held[t] = g.tensors()[t].type;
    p.ops.resize(g.ops().size());
    std::vector<char> weight_cast(g.tensors().size(), 0);
    auto held = [&](int t) { return p.held[static_cast<size_t>(t)]; };
    // Parameters (fp32 under autocast); a system's chunk without the optimizer has no masters, only weights.
    auto is_weight = [&](int t) { return g.tensor(t).role == tensor_role::weight; };
    for (int o : g.topological_order()) {
        const op_node& op = g.op(o);
        auto& plan = p.ops[static_cast<size_t>(o)];
        if (op.kind == op_kind::optimizer) continue;
        if (is_view(op)) {
            const int src = view_source(g, op);
            for (int t : op.outputs)
                if (src >= 0 && is_float(g.tensor(t).type)) p.held[static_cast<size_t>(t)] = held(src);
            continue;
        }
        std::vector<int> ins;
        for (int t : op.inputs)
            if (g.tensor(t).role != tensor_role::constant && is_float(g.tensor(t).type)) ins.push_back(t);
        if (op.phase != op_phase::backward) {
            dtype out = p.low;
            if (autocast_low(op.kind)) {
                plan.compute = p.low;
                for (int t : ins) {
                    if (is_weight(t)) {
                        if (!weight_cast[static_cast<size_t>(t)])
                            plan.weight_casts.emplace_back(t, master[static_cast<size_t>(t)]);
                        weight_cast[static_cast<size_t>(t)] = 1;
                    } else if (held(t) != p.low) {
                        plan.cast_in.emplace_back(t, p.low);
                    }
                }
            } else if (autocast_fp32(op)) {
                plan.compute = dtype::fp32;
                out = dtype::fp32;
                for (int t : ins) {
                    if (is_weight(t))
                        plan.read_as.emplace_back(t, dtype::fp32);
                    else if (held(t) != dtype::fp32)
                        plan.cast_in.emplace_back(t, dtype::fp32);
                }
            } else {
                // Type promotion: the widest input (parameters are fp32); batch norm keeps its input's type.
                out = dtype::fp16;
                bool any = false;
                for (int t : ins) {
                    const dtype in = is_weight(t) ? dtype::fp32 : held(t);
                    if (is_weight(t)) plan.read_as.emplace_back(t, dtype::fp32);
                    if (!any || dtype_bits(in) > dtype_bits(out)) out = in;
                    any = true;
                }
                if (op.kind == op_kind::batchnorm && !op.inputs.empty()) out = held(op.inputs[0]);
                if (op.type == "gelu" && attr_text(op, "approximate", "none") == "tanh") out = dtype::fp32;  // pow
                if (op.type == "rmsnorm") out = dtype::fp32;  // weight (fp32) times the normalised 16-bit rows
                if (!any) out = op.outputs.empty() ? p.low : g.tensor(op.outputs[0]).type;
            }
            for (int t : op.outputs)
                if (is_float(g.tensor(t).type)) p.held[static_cast<size_t>(t)] = out;
            continue;
        }
        // Backward: a gradient has its tensor's type (a parameter's: fp32).
        for (int t : op.outputs) {
            const int of = g.tensor(t).grad_of;
            if (of >= 0 && is_float(g.tensor(t).type))
                p.held[static_cast<size_t>(t)] = is_weight(of) ? dtype::fp32 : held(of);
        }
        dtype compute = ins.empty() ? p.low : held(ins.front());
        if (autocast_low(op.kind))
            compute = p.low;
        else if (autocast_fp32(op) || (op.kind == op_kind::softmax))
            compute = dtype::fp32;
        plan.compute = compute;
        for (int t : ins) {
            if (held(t) == compute) continue;
            if (g.tensor(t).grad_of >= 0)
                plan.cast_in.emplace_back(t, compute);
            else
                plan.read_as.emplace_back(t, compute);  // the forward's saved cast
        }
        for (int t : op.outputs)
            if (is_float(g.tensor(t).type) && held(t) != compute) plan.cast_out.emplace_back(t, compute);
    }
    return p;
}

std::vector<foreach_launch> multi_tensor_launches(const std::vector<std::int64_t>& numels, int depth,
                                                  bool scalar_list) {
    static constexpr int max_tensors[5] = {110, 64, 48, 36, 30};
    static constexpr int max_tensors_scalar_list[5] = {96, 64, 48, 36, 30};
    constexpr int max_blocks = 320;
    constexpr std::int64_t chunk = 65536;
    const int d = std::clamp(depth, 1, 5) - 1;
    const int tensor_limit = scalar_list ? max_tensors_scalar_list[d] : max_tensors[d];
    std::vector<foreach_launch> out;
    foreach_launch cur;
    int tensors = 0, blocks = 0;
    auto add = [&](size_t t, std::int64_t first, std::int64_t count) {
        if (!cur.parts.empty() && cur.parts.back().tensor == t)
            cur.parts.back().count += count;
        else
            cur.parts.push_back({t, first, count});
    };
    for (size_t t = 0; t < numels.size(); ++t) {
        const std::int64_t n = numels[t];
        if (n <= 0) continue;
        ++tensors;
        const std::int64_t chunks = (n + chunk - 1) / chunk;
        for (std::int64_t c = 0; c < chunks; ++c) {
            const std::int64_t first = c * chunk;
            add(t, first, std::min(chunk, n - first));
            ++blocks;
            const bool last_chunk = c == chunks - 1;
            if ((tensors == tensor_limit && last_chunk) || blocks == max_blocks) {
                out.push_back(std::move(cur));
                cur = foreach_launch{};
                blocks = 0;
                // A tensor cut mid-way stays the first of the next launch.
                tensors = last_chunk ? 0 : 1;
            }
        }
    }
    if (blocks > 0) out.push_back(std::move(cur));
    return out;
}

std::vector<lowered_kernel> eager_kernels(const workload_graph& g, int o, const eager_storage& s,
                                          std::optional<dtype> ct) {
    const op_node& op = g.op(o);
    switch (op.kind) {
        case op_kind::conv2d:
            return conv_kernels(g, o, s, ct);
        case op_kind::batchnorm:
            return batchnorm_kernels(g, o, s, ct);
        case op_kind::layernorm:
            return rmsnorm_kernels(g, o, s);
        case op_kind::elementwise:
            if (op.type == "gelu" || op.type == "gelu_grad") return gelu_tanh_kernels(g, o, s);
            if (op.type == "dropout" || op.type == "dropout_grad") return dropout_kernels(g, o, s, ct);
            return cross_entropy_kernels(g, o, s);
        default:
            return {};
    }
}

std::vector<lowered_kernel> foreach_optimizer(const workload_graph& g, const std::vector<int>& ops,
                                              const eager_storage& s) {
    if (ops.empty()) return {};
    // The tensor lists: the parameters torch.optim updates (the fp32 master copies of a mixed-precision graph,
    // which autocast keeps as the parameters), their gradients and the optimizer's state.
    struct lists {
        std::vector<std::uint64_t> p, g, m, v;
    } l;
    std::vector<std::int64_t> numels;
    std::vector<dtype> types;
    std::vector<double> grad_bytes_per;
    const bool adam = g.op(ops.front()).type == "adam";
    for (int o : ops) {
        const op_node& op = g.op(o);
        const int w = op.inputs[0];
        const bool mixed = op.inputs.size() == (adam ? 5u : 4u);
        const int param = mixed ? op.inputs.back() : w;
        numels.push_back(g.tensor(param).elements());
        types.push_back(s.type(g, param));
        l.p.push_back(s.tensor(param));
        l.g.push_back(s.tensor(op.inputs[1]));
        grad_bytes_per.push_back(dtype_bits(s.type(g, op.inputs[1])) / 8.0);
        l.m.push_back(op.inputs.size() > 2 ? s.tensor(op.inputs[2]) : s.tensor(param));
        l.v.push_back(adam && op.inputs.size() > 3 ? s.tensor(op.inputs[3]) : s.tensor(param));
    }
    // sqrt(v) is a new list (foreach_sqrt is out of place): scratch beside the state.
    std::vector<std::uint64_t> root;
    if (adam)
        for (size_t i = 0; i < numels.size(); ++i)
            root.push_back(s.scratch(static_cast<double>(numels[i]) * dtype_bits(types[i]) / 8.0));

    struct list_use {
        const std::vector<std::uint64_t>* list;
        bool grad;  // element size is the gradient's
        bool write;
    };
    struct pass {
        const char* name;
        std::vector<list_use> uses;
        bool scalar_list;
        double ops_per_element;
    };
    std::vector<pass> passes;
    if (adam) {
        // torch.optim.AdamW (foreach, not capturable: the bias corrections are host scalars): decoupled weight
        // decay, m.lerp_(g), v *= beta2, v += (1 - beta2) g g, s = sqrt(v), s /= sqrt(bc2), s += eps,
        // p -= lr/bc1 * m / s.
        passes = {{"mul_weight_decay", {{&l.p, false, false}, {&l.p, false, true}}, false, 1},
                  {"lerp_m", {{&l.m, false, false}, {&l.g, true, false}, {&l.m, false, true}}, false, 3},
                  {"mul_v", {{&l.v, false, false}, {&l.v, false, true}}, false, 1},
                  {"addcmul_v",
                   {{&l.v, false, false}, {&l.g, true, false}, {&l.g, true, false}, {&l.v, false, true}},
                   false,
                   3},
                  {"sqrt_v", {{&l.v, false, false}, {&root, false, true}}, false, 1},
                  {"div_bias_correction", {{&root, false, false}, {&root, false, true}}, true, 1},
                  {"add_eps", {{&root, false, false}, {&root, false, true}}, false, 1},
                  {"addcdiv_p",
                   {{&l.p, false, false}, {&l.m, false, false}, {&root, false, false}, {&l.p, false, true}},
                   true,
                   3}};
    } else {
        // torch.optim.SGD with momentum (foreach): buf *= momentum, buf += g, p -= lr * buf.
        passes = {{"mul_momentum", {{&l.m, false, false}, {&l.m, false, true}}, false, 1},
                  {"add_grad", {{&l.m, false, false}, {&l.g, true, false}, {&l.m, false, true}}, false, 1},
                  {"add_p", {{&l.p, false, false}, {&l.m, false, false}, {&l.p, false, true}}, false, 2}};
    }
    const std::string base = adam ? "optimizer.adamw_foreach." : "optimizer.sgd_foreach.";
    std::vector<lowered_kernel> ks;
    for (const pass& p : passes) {
        // Depth: the tensor lists the op takes, each read once per operand (addcmul_ reads g twice), plus an
        // output list it does not also read (foreach_sqrt writes a new list; in-place ops write their first).
        int depth = 0;
        for (const auto& u : p.uses)
            if (!u.write) ++depth;
        for (const auto& u : p.uses)
            if (u.write && std::none_of(p.uses.begin(), p.uses.end(),
                                        [&](const list_use& r) { return !r.write && r.list == u.list; }))
                ++depth;
        for (const auto& launch : multi_tensor_launches(numels, std::max(1, depth), p.scalar_list)) {
            std::vector<kernel_operand> operands;
            double elems = 0;
            for (const auto& part : launch.parts) elems += static_cast<double>(part.count);
            for (const auto& u : p.uses)
                for (const auto& part : launch.parts) {
                    const double eb = u.grad ? grad_bytes_per[part.tensor] : dtype_bits(types[part.tensor]) / 8.0;
                    operands.push_back(
                        {(*u.list)[part.tensor] + static_cast<std::uint64_t>(static_cast<double>(part.first) * eb),
                         static_cast<double>(part.count) * eb, u.write});
                }
            ks.push_back(stream_kernel(ops[launch.parts.front().tensor], base + p.name, op_class::elementwise,
                                       types[launch.parts.front().tensor], std::move(operands),
                                       p.ops_per_element * elems));
            for (size_t i = 1; i < launch.parts.size(); ++i) ks.back().ops.push_back(ops[launch.parts[i].tensor]);
        }
    }
    return ks;
}

}  // namespace tessel
