#include "engine/workload/op_types.h"

#include <algorithm>
#include <map>

#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel {

const char* attr_type_name(attr_type t) {
    switch (t) {
        case attr_type::integer:
            return "whole number";
        case attr_type::integers:
            return "list of whole numbers";
        case attr_type::boolean:
            return "true/false";
        case attr_type::number:
            return "number";
        case attr_type::text:
            return "word";
    }
    return "?";
}

namespace {

attr_spec a_int(std::string n, std::string def, std::string doc) {
    return attr_spec{std::move(n), attr_type::integer, std::move(def), false, std::move(doc), {}};
}
attr_spec a_ints(std::string n, std::string def, std::string doc) {
    return attr_spec{std::move(n), attr_type::integers, std::move(def), false, std::move(doc), {}};
}
attr_spec a_bool(std::string n, std::string def, std::string doc) {
    return attr_spec{std::move(n), attr_type::boolean, std::move(def), false, std::move(doc), {}};
}
attr_spec a_num(std::string n, std::string def, std::string doc) {
    return attr_spec{std::move(n), attr_type::number, std::move(def), false, std::move(doc), {}};
}
attr_spec a_text(std::string n, std::string def, std::string doc) {
    return attr_spec{std::move(n), attr_type::text, std::move(def), false, std::move(doc), {}};
}
attr_spec required(attr_spec a) {
    a.required = true;
    return a;
}

op_type_info unary(std::string name, double fpe, double grad, std::string doc, std::vector<attr_spec> attrs = {}) {
    return op_type_info{std::move(name), op_kind::elementwise, 1, 1, fpe, grad, std::move(attrs), std::move(doc)};
}
op_type_info binary(std::string name, double fpe, double grad, std::string doc) {
    return op_type_info{std::move(name), op_kind::elementwise, 2, 2, fpe, grad, {}, std::move(doc)};
}

/// Matrix products and convolutions.
void add_matrix_ops(std::vector<op_type_info>& c) {
    const std::vector<attr_spec> conv_attrs = {
        a_ints("stride", "1", "step of the window in (height, width); one value applies to both"),
        a_ints("padding", "0", "zero padding: one value for all sides, (height, width), or (top, left, bottom, right)"),
        a_ints("dilation", "1", "spacing of the kernel taps in (height, width)"),
        a_int("groups", "1", "channel groups; groups = channels is a depthwise convolution"),
    };
    c.push_back({"matmul",
                 op_kind::matmul,
                 2,
                 3,
                 0,
                 0,
                 {a_bool("transpose_a", "false", "use a with its last two axes swapped"),
                  a_bool("transpose_b", "false", "use b with its last two axes swapped"),
                  a_bool("accumulate_batch", "false",
                         "sum the products over the batch axes (weight gradients): the output is M x N")},
                 "a[..., M, K] x b[..., K, N] (+ bias broadcast to the output); batch axes broadcast. "
                 "Linear layers, Gemm and MatMul. 2 FLOPs per MAC, plus 1 per output element for the bias"});
    c.push_back({"conv2d", op_kind::conv2d, 2, 3, 0, 0, conv_attrs,
                 "x[N, C, H, W] * weight[OC, C/groups, KH, KW] (+ bias[OC]) -> [N, OC, OH, OW]; "
                 "MACs = N*OH*OW*OC*(C/groups)*KH*KW, costed as its implicit GEMM"});
    {
        auto a = conv_attrs;
        a.push_back(required(a_ints("input_shape", "", "shape of the forward input x")));
        c.push_back({"conv2d_grad_input", op_kind::conv2d, 2, 2, 0, 0, a,
                     "backward of conv2d for its input: dy, weight -> dx (a transposed convolution, same MACs)"});
    }
    {
        auto a = conv_attrs;
        a.push_back(required(a_ints("weight_shape", "", "shape of the forward weight")));
        c.push_back({"conv2d_grad_weight", op_kind::conv2d, 2, 2, 0, 0, a,
                     "backward of conv2d for its weight: x, dy -> dweight (same MACs as the forward)"});
    }
}

/// Pooling (flops_per_element: per window tap of each output element).
void add_pooling_ops(std::vector<op_type_info>& c) {
    const std::vector<attr_spec> pool_attrs = {
        required(a_ints("kernel", "", "window (height, width); one value applies to both")),
        a_ints("stride", "", "step of the window; defaults to the kernel, as in PyTorch"),
        a_ints("padding", "0", "padding: one value, (height, width), or (top, left, bottom, right)"),
        a_ints("dilation", "1", "spacing of the window taps"),
        a_bool("ceil_mode", "false", "round the output size up instead of down"),
    };
    c.push_back({"max_pool", op_kind::pool, 1, 1, 1, 1, pool_attrs,
                 "maximum over each window: kernel taps - 1 comparisons per output"});
    c.push_back({"avg_pool", op_kind::pool, 1, 1, 1, 1, pool_attrs,
                 "mean over each window: kernel taps - 1 additions and 1 multiply per output"});
    c.push_back({"global_avg_pool",
                 op_kind::pool,
                 1,
                 1,
                 1,
                 1,
                 {},
                 "mean over all spatial positions: [N, C, H, W] -> [N, C, 1, 1]"});
    c.push_back({"global_max_pool",
                 op_kind::pool,
                 1,
                 1,
                 1,
                 1,
                 {},
                 "maximum over all spatial positions: [N, C, H, W] -> [N, C, 1, 1]"});
}

/// Elementwise, unary (FLOPs per output element; special functions count 1 each).
void add_unary_ops(std::vector<op_type_info>& c) {
    c.push_back(unary("relu", 1, 1, "max(x, 0)"));
    c.push_back(
        unary("leaky_relu", 2, 2, "x if x > 0 else alpha * x", {a_num("alpha", "0.01", "slope for negative x")}));
    {
        attr_spec approximate = a_text("approximate", "none",
                                       "none: the erf form; tanh: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), GPT-2's "
                                       "(ONNX Gelu's attribute)");
        approximate.choices = {"none", "tanh"};
        c.push_back(unary("gelu", 5, 9, "x * 0.5 * (1 + erf(x / sqrt(2))): divide, erf, add, multiply, multiply",
                          {approximate}));
    }
    c.push_back(unary("silu", 5, 7, "x * sigmoid(x) (swish): the 4 of sigmoid and a multiply"));
    c.push_back(unary("dropout", 2, 1,
                      "training-time dropout: x * mask / (1 - ratio), a random draw and a multiply per element (the "
                      "1-byte mask PyTorch keeps for the backward pass is in the pipeline memory model, not in the "
                      "op's bytes); its gradient is dy times the mask",
                      {a_num("ratio", "0.1", "probability of zeroing an element")}));
    c.push_back(unary("sigmoid", 4, 3, "1 / (1 + exp(-x)): negate, exp, add, reciprocal"));
    c.push_back(unary("tanh", 1, 3, "tanh(x)"));
    c.push_back(unary("erf", 1, 4, "erf(x)"));
    c.push_back(unary("exp", 1, 1, "exp(x)"));
    c.push_back(unary("log", 1, 1, "natural logarithm"));
    c.push_back(unary("sqrt", 1, 2, "square root"));
    c.push_back(unary("rsqrt", 1, 3, "1 / sqrt(x)"));
    c.push_back(unary("reciprocal", 1, 2, "1 / x"));
    c.push_back(unary("neg", 1, 1, "-x"));
    c.push_back(unary("abs", 1, 1, "|x|"));
    c.push_back(unary("floor", 1, 0, "round down"));
    c.push_back(unary("ceil", 1, 0, "round up"));
    c.push_back(unary("round", 1, 0, "round to nearest"));
    c.push_back(unary("sin", 1, 2, "sine"));
    c.push_back(unary("cos", 1, 2, "cosine"));
    c.push_back(unary("softplus", 3, 4, "log(1 + exp(x)): exp, add, log"));
    c.push_back(
        op_type_info{"clip",
                     op_kind::elementwise,
                     1,
                     3,
                     2,
                     1,
                     {a_num("min", "", "lower bound (absent: none)"), a_num("max", "", "upper bound (absent: none)")},
                     "min(max(x, min), max): 2 comparisons (ReLU6 is clip 0..6); bounds may also be inputs 2 and 3"});
    c.push_back(unary("isnan", 1, 0, "x != x, a boolean"));
    c.push_back(unary("not", 1, 0, "logical not of a boolean"));
    c.push_back(unary("cast", 0, 0, "converts to another data type: moves bytes, no arithmetic",
                      {required(a_text("to", "", "target data type (fp32, fp16, bf16, int64, bool, ...)"))}));
    c.push_back(unary("copy", 0, 0, "a copy (Dropout at inference, materialised Identity): bytes only"));
    c.push_back(op_type_info{
        "trilu",
        op_kind::elementwise,
        1,
        2,
        0,
        0,
        {a_bool("upper", "true", "keep the upper triangle (else the lower)"), a_int("k", "0", "diagonal offset")},
        "keeps one triangle of the last two axes, zeroes the rest: a masked copy, no arithmetic"});
    c.push_back(op_type_info{"expand",
                             op_kind::elementwise,
                             1,
                             2,
                             0,
                             1,
                             {a_ints("shape", "", "target shape, broadcast with the input's (numpy rules)")},
                             "broadcasts the input to a larger shape: writes every output element, no arithmetic"});
}

/// Elementwise, binary and ternary, with numpy broadcasting.
void add_binary_ops(std::vector<op_type_info>& c) {
    c.push_back(binary("add", 1, 1, "a + b"));
    c.push_back(binary("sub", 1, 1, "a - b"));
    c.push_back(binary("mul", 1, 2, "a * b"));
    c.push_back(binary("div", 1, 4, "a / b"));
    c.push_back(binary("pow", 1, 3, "a ** b"));
    c.push_back(binary("max", 1, 1, "elementwise maximum"));
    c.push_back(binary("min", 1, 1, "elementwise minimum"));
    c.push_back(binary("mod", 1, 0, "remainder"));
    c.push_back(binary("prelu", 2, 2, "x if x > 0 else slope * x, slope broadcast"));
    c.push_back(binary("equal", 1, 0, "a == b, a boolean"));
    c.push_back(binary("less", 1, 0, "a < b, a boolean"));
    c.push_back(binary("less_equal", 1, 0, "a <= b, a boolean"));
    c.push_back(binary("greater", 1, 0, "a > b, a boolean"));
    c.push_back(binary("greater_equal", 1, 0, "a >= b, a boolean"));
    c.push_back(binary("and", 1, 0, "logical and"));
    c.push_back(binary("or", 1, 0, "logical or"));
    c.push_back(binary("xor", 1, 0, "logical xor"));
    c.push_back(op_type_info{"where", op_kind::elementwise, 3, 3, 1, 1, {}, "cond ? a : b, one select per element"});
    c.push_back(op_type_info{"fma", op_kind::elementwise, 3, 3, 2, 2, {}, "a * b + c (axpy with a scalar a): 2 FLOPs"});
    c.push_back(op_type_info{"loss_grad",
                             op_kind::elementwise,
                             1,
                             2,
                             2,
                             0,
                             {},
                             "gradient of the training loss at a graph output (optional target as input 2): "
                             "(prediction - target) * scale, 2 per element"});
    c.push_back(op_type_info{"stencil7",
                             op_kind::elementwise,
                             1,
                             2,
                             13,
                             13,
                             {},
                             "3D 7-point stencil on a field [X, Y, Z] (optional coefficient input): "
                             "7 multiplies and 6 adds per point; the wafer-scale classic"});
}

/// Reductions (FLOPs per input element).
void add_reduction_ops(std::vector<op_type_info>& c) {
    const std::vector<attr_spec> reduce_attrs = {
        a_ints("axes", "", "axes to reduce (negative counts from the end); all axes when absent"),
        a_bool("keepdims", "false", "keep reduced axes with size 1"),
    };
    c.push_back({"reduce_sum", op_kind::reduce, 1, 2, 1, 0, reduce_attrs, "sum over axes"});
    c.push_back({"reduce_mean", op_kind::reduce, 1, 2, 1, 1, reduce_attrs, "mean over axes (+1 divide per output)"});
    c.push_back({"reduce_max", op_kind::reduce, 1, 2, 1, 1, reduce_attrs, "maximum over axes"});
    c.push_back({"reduce_min", op_kind::reduce, 1, 2, 1, 1, reduce_attrs, "minimum over axes"});
    c.push_back({"reduce_prod", op_kind::reduce, 1, 2, 1, 2, reduce_attrs, "product over axes"});
    c.push_back({"reduce_l2", op_kind::reduce, 1, 2, 2, 2, reduce_attrs,
                 "sqrt of the sum of squares: square and add per input"});
    c.push_back({"argmax",
                 op_kind::reduce,
                 1,
                 1,
                 1,
                 0,
                 {a_int("axis", "0", "axis to search"), a_bool("keepdims", "false", "keep the axis with size 1")},
                 "index of the maximum along an axis (int64)"});
    c.push_back({"dot",
                 op_kind::reduce,
                 2,
                 2,
                 2,
                 2,
                 {},
                 "inner product of two equal-shape tensors -> a scalar: multiply and add per element"});
}

/// Normalisation and softmax (FLOPs per element).
void add_normalisation_ops(std::vector<op_type_info>& c) {
    c.push_back({"softmax",
                 op_kind::softmax,
                 1,
                 1,
                 5,
                 4,
                 {a_int("axis", "-1", "axis normalised over")},
                 "exp(x - max) / sum: max, subtract, exp, sum, divide per element"});
    c.push_back({"log_softmax",
                 op_kind::softmax,
                 1,
                 1,
                 5,
                 3,
                 {a_int("axis", "-1", "axis normalised over")},
                 "x - max - log(sum(exp(x - max)))"});
    c.push_back({"layernorm",
                 op_kind::layernorm,
                 1,
                 3,
                 5,
                 13,
                 {a_int("axis", "-1", "first normalised axis; all axes from it on are normalised"),
                  a_num("epsilon", "1e-5", "added to the variance")},
                 "(x - mean) / sqrt(var + eps) * scale + bias: mean, subtract, square, sum, normalise per element "
                 "(5) plus 1 each for scale and bias"});
    c.push_back({"rmsnorm",
                 op_kind::layernorm,
                 1,
                 2,
                 3,
                 9,
                 {a_int("axis", "-1", "first normalised axis"), a_num("epsilon", "1e-6", "added to the mean square")},
                 "x / sqrt(mean(x^2) + eps) * scale: square, sum, normalise (3) plus 1 for scale"});
    c.push_back({"batchnorm",
                 op_kind::batchnorm,
                 5,
                 5,
                 2,
                 10,
                 {a_num("epsilon", "1e-5", "added to the variance")},
                 "inputs x[N, C, ...], scale[C], bias[C], mean[C], var[C]; at inference the four per-channel "
                 "values fold into one multiply-add per element (2 FLOPs)"});
}

/// Attention.
void add_attention_ops(std::vector<op_type_info>& c) {
    c.push_back({"attention",
                 op_kind::attention,
                 3,
                 4,
                 6,
                 4,
                 {a_bool("causal", "false", "mask future positions (counted as a dense kernel)"),
                  a_num("scale", "", "score scale; 1/sqrt(head size) when absent")},
                 "fused scaled dot-product attention: q[B, H, S, D], k[B, Hkv, Skv, D], v[B, Hkv, Skv, Dv] "
                 "(+ mask) -> [B, H, S, Dv]; MACs = B*H*S*Skv*(D+Dv), plus 6 FLOPs per score "
                 "(scale and softmax); H a multiple of Hkv is grouped-query attention"});
}

/// Embedding and gather (data movement: bytes of the rows actually read).
void add_gather_ops(std::vector<op_type_info>& c) {
    c.push_back({"embedding",
                 op_kind::embedding,
                 2,
                 2,
                 0,
                 1,
                 {},
                 "table[V, D], ids[...] (integers) -> [..., D]; reads only the looked-up rows"});
    c.push_back({"gather",
                 op_kind::gather,
                 2,
                 2,
                 0,
                 1,
                 {a_int("axis", "0", "axis indexed")},
                 "data, indices -> data.shape[:axis] + indices.shape + data.shape[axis+1:]"});
    c.push_back({"gather_elements",
                 op_kind::gather,
                 2,
                 2,
                 0,
                 1,
                 {a_int("axis", "0", "axis indexed")},
                 "data, indices (same rank) -> indices.shape"});
}

/// Views and data movement.
void add_view_ops(std::vector<op_type_info>& c) {
    // A serving step packs every sequence's new tokens into one buffer (vLLM's flattened batch): the layers run
    // on all of them at once and each attention kernel indexes its sequences' part, so nothing is copied.
    const attr_spec k_packed_attr = a_int("packed", "0",
                                          "1: the parts lie side by side in one buffer (a step's tokens packed, as "
                                          "vLLM lays them out) and the kernels index them, so no bytes move");
    c.push_back({"reshape",
                 op_kind::reshape,
                 1,
                 2,
                 0,
                 0,
                 {a_ints("shape", "", "new shape; -1 is inferred, 0 copies the input's size (ONNX)")},
                 "a new view of the same data: no bytes moved"});
    c.push_back({"flatten",
                 op_kind::reshape,
                 1,
                 1,
                 0,
                 0,
                 {a_int("axis", "1", "axes before it form the first dimension")},
                 "[d0..dk-1, dk..] -> [d0*..*dk-1, dk*..]: no bytes moved"});
    c.push_back({"squeeze",
                 op_kind::reshape,
                 1,
                 2,
                 0,
                 0,
                 {a_ints("axes", "", "axes of size 1 to drop; all such when absent")},
                 "drops axes of size 1: no bytes moved"});
    c.push_back({"unsqueeze",
                 op_kind::reshape,
                 1,
                 2,
                 0,
                 0,
                 {required(a_ints("axes", "", "positions of the new axes in the output"))},
                 "inserts axes of size 1: no bytes moved"});
    c.push_back({"cache_append",
                 op_kind::reshape,
                 2,
                 2,
                 0,
                 0,
                 {required(a_int("axis", "", "the cache's token axis"))},
                 "the cache (input 0, its slots for the new entries included) once the new entries (input 1, "
                 "written by the op that made them) are in place: a view of the cache, no bytes moved, as vLLM's "
                 "paged KV cache is appended to"});
    c.push_back({"transpose",
                 op_kind::transpose,
                 1,
                 1,
                 0,
                 0,
                 {a_ints("perm", "", "output axis i is input axis perm[i]; reversed when absent")},
                 "permutes axes: reads and writes every element"});
    c.push_back({"concat",
                 op_kind::concat,
                 1,
                 -1,
                 0,
                 0,
                 {required(a_int("axis", "", "axis joined along")), k_packed_attr},
                 "joins tensors along an axis: reads and writes every element (none when packed)"});
    c.push_back({"split",
                 op_kind::split,
                 1,
                 2,
                 0,
                 0,
                 {a_int("axis", "0", "axis split along"),
                  a_ints("sizes", "", "size of each part; equal parts (one per output) when absent"), k_packed_attr},
                 "splits a tensor into parts: reads and writes every element (none when packed)"});
    c.push_back({"slice",
                 op_kind::slice,
                 1,
                 5,
                 0,
                 0,
                 {required(a_ints("starts", "", "first index per sliced axis (negative counts from the end)")),
                  required(a_ints("ends", "", "one past the last index (clamped to the axis size)")),
                  a_ints("axes", "", "axes sliced; 0, 1, ... when absent"),
                  a_ints("steps", "", "step per sliced axis; 1 when absent")},
                 "takes a strided window: reads and writes the window's elements"});
}

/// Collectives for multi-chip work (FLOPs: the reduction adds a chip performs).
void add_collective_ops(std::vector<op_type_info>& c) {
    const std::vector<attr_spec> collective_attrs = {
        required(a_int("ranks", "", "number of participating chips")),
        a_int("axis", "0", "axis that is gathered or scattered"),
        a_text("group", "", "the process group of a parallel plan (tp, dp, pp); empty: all chips"),
    };
    c.push_back({"all_reduce", op_kind::collective, 1, 1, 1, 1, collective_attrs,
                 "sum across chips, every chip gets the result; (ranks-1)/ranks adds per element on each chip. Its "
                 "gradient is the output gradient itself (Megatron-LM's g: the ranks use the sum identically)"});
    {
        auto a = collective_attrs;
        a.push_back(a_bool("grad_split", "false",
                           "the ranks use the gathered tensor identically (replicated work), so the backward op only "
                           "takes this rank's part of the gradient instead of a reduce_scatter"));
        c.push_back({"all_gather", op_kind::collective, 1, 1, 0, 1, a,
                     "concatenates every chip's tensor along `axis`: the output is ranks times larger; its backward "
                     "op is a reduce_scatter"});
    }
    c.push_back({"reduce_scatter", op_kind::collective, 1, 1, 1, 0, collective_attrs,
                 "sums across chips and leaves each chip 1/ranks of the result along `axis`; its backward op is an "
                 "all_gather"});
    c.push_back({"all_to_all", op_kind::collective, 1, 1, 0, 0, collective_attrs,
                 "each chip sends a 1/ranks share to every other: same shape out"});
    c.push_back({"grad_all_reduce",
                 op_kind::reshape,
                 1,
                 1,
                 0,
                 0,
                 {required(a_ints("shape", "", "the input's shape (the output is the input)")),
                  required(a_int("ranks", "", "number of participating chips")),
                  a_text("group", "", "the process group of a parallel plan (tp, dp, pp); empty: all chips")},
                 "identity in the forward pass (a view, free); its backward op is an all_reduce of the gradient over "
                 "the group: Megatron-LM's f operator in front of a column-parallel block"});
}

/// Optimizers (FLOPs per parameter).
void add_optimizer_ops(std::vector<op_type_info>& c) {
    c.push_back({"sgd",
                 op_kind::optimizer,
                 2,
                 4,
                 2,
                 0,
                 {},
                 "inputs w, g (+ momentum buffer, + fp32 master weights): w -= lr * g (2 per parameter); with "
                 "momentum v = mu*v + g, w -= lr*v (4); 1 more to round the master copy to the compute type"});
    c.push_back({"adam",
                 op_kind::optimizer,
                 4,
                 5,
                 11,
                 0,
                 {},
                 "inputs w, g, m, v (+ fp32 master weights): m and v updates (5), bias corrections (2), "
                 "w -= lr * m / (sqrt(v) + eps) (4); 1 more to round the master copy to the compute type"});
}

/// Ops tessel cannot cost by kind.
void add_uncosted_ops(std::vector<op_type_info>& c) {
    c.push_back({"generic",
                 op_kind::generic,
                 0,
                 -1,
                 0,
                 0,
                 {a_num("flops_per_element", "0", "FLOPs per output element, when you know them"),
                  a_text("type", "", "the op's own name, e.g. the ONNX op type")},
                 "an op tessel does not know: costed by the bytes of its tensors; output shapes must be declared"});
    c.push_back({"shape_only",
                 op_kind::shape_only,
                 0,
                 -1,
                 0,
                 0,
                 {a_text("type", "", "the op's own name (Shape, Constant, a folded Gather...)")},
                 "computes shapes or constants only (ONNX Shape, Constant, folded index arithmetic): costs nothing"});
}

std::vector<op_type_info> make_catalog() {
    std::vector<op_type_info> c;
    add_matrix_ops(c);
    add_pooling_ops(c);
    add_unary_ops(c);
    add_binary_ops(c);
    add_reduction_ops(c);
    add_normalisation_ops(c);
    add_attention_ops(c);
    add_gather_ops(c);
    add_view_ops(c);
    add_collective_ops(c);
    add_optimizer_ops(c);
    add_uncosted_ops(c);
    return c;
}

}  // namespace

const std::vector<op_type_info>& op_types() {
    static const std::vector<op_type_info> c = make_catalog();
    return c;
}

namespace {
const std::map<std::string, const op_type_info*, std::less<>>& catalog_index() {
    static const std::map<std::string, const op_type_info*, std::less<>> index = [] {
        std::map<std::string, const op_type_info*, std::less<>> m;
        for (const auto& t : op_types()) m[t.name] = &t;
        return m;
    }();
    return index;
}
}  // namespace

bool is_grad_type(std::string_view name) {
    // A backward op is "<forward type>_grad" where that name is not itself a catalog type (loss_grad is).
    return !catalog_index().count(name) && find_op_type(name) != nullptr;
}

const op_type_info* find_op_type(std::string_view name) {
    const auto& index = catalog_index();
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    constexpr std::string_view suffix = "_grad";
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
        it = index.find(name.substr(0, name.size() - suffix.size()));
        if (it != index.end() && it->second->kind != op_kind::generic && it->second->kind != op_kind::shape_only)
            return it->second;
    }
    return nullptr;
}

std::vector<std::string> op_type_names() {
    std::vector<std::string> v;
    for (const auto& t : op_types()) v.push_back(t.name);
    return v;
}

op_class op_class_of(op_kind k) {
    switch (k) {
        case op_kind::matmul:
            return op_class::gemm;
        case op_kind::conv2d:
            return op_class::conv;
        case op_kind::pool:
            return op_class::pooling;
        case op_kind::elementwise:
            return op_class::elementwise;
        case op_kind::reduce:
            return op_class::reduction;
        case op_kind::softmax:
            return op_class::softmax;
        case op_kind::layernorm:
        case op_kind::batchnorm:
            return op_class::norm;
        case op_kind::attention:
            return op_class::attention;
        case op_kind::embedding:
            return op_class::embedding;
        case op_kind::gather:
        case op_kind::reshape:
        case op_kind::transpose:
        case op_kind::concat:
        case op_kind::split:
        case op_kind::slice:
            return op_class::data_movement;
        case op_kind::collective:
            return op_class::collective;
        case op_kind::optimizer:
            return op_class::elementwise;
        case op_kind::generic:
        case op_kind::shape_only:
            return op_class::other;
    }
    return op_class::other;
}

std::int64_t attr_int(const op_node& op, const std::string& name, std::int64_t fallback) {
    const auto it = op.int_attrs.find(name);
    return it == op.int_attrs.end() || it->second.empty() ? fallback : it->second.front();
}

std::vector<std::int64_t> attr_ints(const op_node& op, const std::string& name) {
    const auto it = op.int_attrs.find(name);
    return it == op.int_attrs.end() ? std::vector<std::int64_t>{} : it->second;
}

double attr_number(const op_node& op, const std::string& name, double fallback) {
    const auto it = op.float_attrs.find(name);
    return it == op.float_attrs.end() ? fallback : it->second;
}

std::string attr_text(const op_node& op, const std::string& name, const std::string& fallback) {
    const auto it = op.str_attrs.find(name);
    return it == op.str_attrs.end() ? fallback : it->second;
}

bool has_attr(const op_node& op, const std::string& name) {
    return op.int_attrs.count(name) || op.float_attrs.count(name) || op.str_attrs.count(name);
}

std::string describe_op(const op_node& op) { return "op '" + op.name + "' (" + op.type + ")"; }

bool is_view(const op_node& op) {
    if (op.kind == op_kind::reshape || op.kind == op_kind::shape_only) return true;
    const op_cost& c = op.cost;
    return c.macs == 0 && c.flops == 0 && c.bytes_in == 0 && c.bytes_weight == 0 && c.bytes_out == 0;
}

int view_source(const workload_graph& g, const op_node& op) {
    for (int t : op.inputs)
        if (g.tensor(t).role != tensor_role::constant) return t;
    return -1;
}

namespace {

std::vector<std::int64_t> parse_int_list(const std::string& text) {
    std::vector<std::int64_t> v;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t comma = text.find(',', pos);
        v.push_back(std::stoll(text.substr(pos, comma - pos)));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return v;
}

/// Expands the short forms of a per-axis list: one value for every axis, or (h, w) for 4-sided padding.
void normalise_spatial(op_node& op, const std::string& name, size_t want) {
    auto it = op.int_attrs.find(name);
    if (it == op.int_attrs.end()) return;
    auto& v = it->second;
    if (v.size() == want) return;
    if (v.size() == 1)
        v.assign(want, v.front());
    else if (want == 4 && v.size() == 2)
        v = {v[0], v[1], v[0], v[1]};
    else
        fail(describe_op(op) + ": '" + name + "' needs 1" + (want == 4 ? ", 2" : "") + " or " + std::to_string(want) +
                 " values, got " + std::to_string(v.size()),
             op.where);
}

}  // namespace

void apply_attr_defaults(op_node& op) {
    const op_type_info* info = op.kind == op_kind::generic      ? find_op_type("generic")
                               : op.kind == op_kind::shape_only ? find_op_type("shape_only")
                                                                : find_op_type(op.type);
    if (!info) fail("unknown op type '" + op.type + "'" + did_you_mean(op.type, op_type_names()), op.where);
    for (const auto& a : info->attrs) {
        if (a.name == "type") continue;
        if (has_attr(op, a.name)) {
            if (!a.choices.empty() && a.type == attr_type::text) {
                const std::string v = attr_text(op, a.name);
                if (std::find(a.choices.begin(), a.choices.end(), v) == a.choices.end()) {
                    std::string list;
                    for (const auto& c : a.choices) list += (list.empty() ? "" : ", ") + c;
                    fail(describe_op(op) + ": attribute '" + a.name + "' is '" + v + "'; expected one of " +
                             std::string(list),
                         op.where);
                }
            }
            continue;
        }
        if (a.required) fail(describe_op(op) + ": missing attribute '" + a.name + "' (" + a.doc + ")", op.where);
        if (a.default_value.empty()) continue;
        switch (a.type) {
            case attr_type::integer:
                op.int_attrs[a.name] = {std::stoll(a.default_value)};
                break;
            case attr_type::integers:
                op.int_attrs[a.name] = parse_int_list(a.default_value);
                break;
            case attr_type::boolean:
                op.int_attrs[a.name] = {a.default_value == "true" ? 1 : 0};
                break;
            case attr_type::number:
                op.float_attrs[a.name] = std::stod(a.default_value);
                break;
            case attr_type::text:
                op.str_attrs[a.name] = a.default_value;
                break;
        }
    }
    if (info->kind == op_kind::conv2d || info->kind == op_kind::pool) {
        normalise_spatial(op, "stride", 2);
        normalise_spatial(op, "dilation", 2);
        normalise_spatial(op, "padding", 4);
        normalise_spatial(op, "kernel", 2);
        if (info->kind == op_kind::pool && op.int_attrs.count("kernel") && !op.int_attrs.count("stride"))
            op.int_attrs["stride"] = op.int_attrs["kernel"];
    }
}

}  // namespace tessel
