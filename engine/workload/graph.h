// The workload graph: operations with typed tensors, stored in a Boost.Graph adjacency list (vertices are ops,
// edges are tensors from producer to consumer). Every op knows its cost (FLOPs with a MAC counted as 2, bytes
// read and written, parameters), which is what mappers lower onto a platform.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/workload/overrides.h"
#include "models/core/dtype.h"
#include "models/core/error.h"
#include "models/core/transaction.h"

namespace tessel {

/// What a tensor is for: mappers keep weights resident, stream activations, and skip constants.
enum class tensor_role : std::uint8_t {
    activation,  // produced and consumed inside the graph
    input,       // a graph input (images, token ids)
    output,      // a graph output
    weight,      // a trained parameter
    state,       // optimizer state, KV cache and other persistent non-parameter data
    constant     // shape-only data that costs nothing (ONNX Shape/Constant results)
};
const char* tensor_role_name(tensor_role r);

struct tensor_info {
    std::string name;
    std::vector<std::int64_t> shape;
    dtype type = dtype::fp16;
    tensor_role role = tensor_role::activation;
    int producer = -1;           // op index, -1 for inputs, weights and constants
    std::vector<int> consumers;  // op indices
    /// A weight stored in another layout (an ONNX Transpose or Reshape of an initializer): the tensor index
    /// whose parameters it holds, so they are counted once. -1 for an ordinary tensor.
    int alias_of = -1;
    /// A gradient (training expansion): the tensor it is the gradient of, or a part of that gradient; -1 otherwise.
    int grad_of = -1;

    std::int64_t elements() const;
    std::uint64_t bytes() const { return dtype_bytes(type, static_cast<std::uint64_t>(elements())); }
    std::string shape_str() const;  // "1x3x224x224"
};

/// Op kinds. `type` in op_node refines them (elementwise "relu", collective "all_reduce", ONNX op type).
enum class op_kind : std::uint8_t {
    matmul,       // batched matrix product, Gemm and MatMul
    conv2d,       // groups, stride, padding, dilation
    pool,         // max / average / global average
    elementwise,  // unary and binary with broadcast
    reduce,       // sum / mean / max over axes
    softmax,
    layernorm,  // also rmsnorm (type "rmsnorm")
    batchnorm,
    attention,  // fused scaled-dot-product attention
    embedding,  // table lookup (Gather on a weight)
    gather,     // index-based data movement
    reshape,    // view changes: reshape, flatten, squeeze, unsqueeze (no data moved when contiguous)
    transpose,
    concat,
    split,
    slice,
    collective,  // all_reduce, all_gather, reduce_scatter
    optimizer,   // parameter update (SGD, Adam)
    generic,     // an op tessel does not know, costed by its tensor sizes
    shape_only   // Shape, Constant, Identity: no cost
};
const char* op_kind_name(op_kind k);

/// Training phase an op belongs to.
enum class op_phase : std::uint8_t { forward, backward, optimizer };

/// What an op costs. MACs count 2 FLOPs each in `flops`.
struct op_cost {
    double macs = 0;
    double flops = 0;         // total floating-point operations (2 * macs + vector work)
    double bytes_in = 0;      // activations read
    double bytes_weight = 0;  // parameters read
    double bytes_out = 0;     // results written
    double params = 0;        // trainable parameter count
    // Matrix-product view (batch x (M x K) . (K x N)); conv2d is given as its implicit GEMM.
    std::int64_t batch = 0, m = 0, n = 0, k = 0;
    op_class cls = op_class::other;

    double bytes_read() const { return bytes_in + bytes_weight; }
    double bytes_written() const { return bytes_out; }
    double intensity() const;  // FLOPs per byte moved
};

/// An elementwise op folded into the epilogue of the op that produces its input (see fuse_elementwise()).
/// It applies to the host op's output; its other inputs are appended to the host's inputs.
struct fused_op {
    std::string name;
    std::string type;      // elementwise type: "relu", "add", ...
    int extra_inputs = 0;  // how many of the host's trailing inputs belong to this fused op
};

struct op_node {
    std::string name;
    op_kind kind = op_kind::generic;
    std::string type;  // refinement: "relu", "add", "max", "all_reduce", or the ONNX op type
    op_phase phase = op_phase::forward;
    std::vector<int> inputs;  // tensor indices
    std::vector<int> outputs;
    std::map<std::string, std::vector<std::int64_t>> int_attrs;  // strides, pads, axes, group, ...
    std::map<std::string, double> float_attrs;
    std::map<std::string, std::string> str_attrs;
    op_cost cost;
    dtype compute_type = dtype::fp16;
    source_location where;        // the YAML node or ONNX node it came from
    std::vector<fused_op> fused;  // epilogue ops merged in by the fusion pass, applied in order

    /// The compute step a mapper issues for this op (or a share of it).
    work to_work() const;
    /// Inputs of the op itself, before those of fused epilogue ops.
    size_t own_inputs() const;
};

/// An op of a type tessel does not model (an unknown ONNX op, a YAML `generic` op without flops_per_element): it
/// runs as the bytes of its tensors alone, so its time and energy are a lower bound.
inline bool unmodelled(const op_node& op) { return op.kind == op_kind::generic && op.cost.flops == 0; }

/// Vertex = op index, edge = tensor index.
using graph_storage = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, int, int>;

class workload_source;

class workload_graph {
public:
    std::string name;
    std::map<std::string, std::string> parameters;  // batch, seq, precision... as resolved
    /// The resolved `batch` parameter as a number (0 when the workload has none): mappers count max(1, batch)
    /// samples per step. Set where the parameters are resolved (resolve_batch), so no mapper parses it again.
    double batch = 0;
    /// The source it was built from and the overrides it was built at (null for a graph assembled by hand), so a
    /// system mapper can build it again per stage or microbatch with other overrides, without a reload.
    std::shared_ptr<const workload_source> origin;
    workload_overrides overrides;
    /// Things the user should know about how the graph was built (ops imported as generic, defaults taken).
    std::vector<std::string> notes;

    /// Sets `batch` from parameters["batch"] (read as C's atof reads it, as the mappers always have).
    void resolve_batch();

    int add_tensor(tensor_info t);
    /// Adds an op; links it to its input/output tensors and records producer/consumers.
    int add_op(op_node op);

    const std::vector<op_node>& ops() const { return m_ops; }
    std::vector<op_node>& ops() { return m_ops; }
    const std::vector<tensor_info>& tensors() const { return m_tensors; }
    std::vector<tensor_info>& tensors() { return m_tensors; }
    const op_node& op(int i) const { return m_ops[static_cast<size_t>(i)]; }
    const tensor_info& tensor(int i) const { return m_tensors[static_cast<size_t>(i)]; }
    int find_tensor(const std::string& name) const;  // -1 when absent

    /// Rebuilds the Boost.Graph view from ops and tensors (after passes edit them).
    void rebuild();
    /// Recomputes every tensor's producer and consumers from the ops' inputs and outputs, then rebuild().
    void relink();
    /// Keeps the ops with keep[i] true and only the tensors they read or write (a weight no kept op reads
    /// goes too); renumbers ops and tensors in their old order and relinks. Used by passes that remove ops.
    void compact(const std::vector<bool>& keep);
    /// Tensors with role output, in tensor order.
    std::vector<int> graph_outputs() const;
    const graph_storage& storage() const { return m_g; }

    /// Ops in a topological order (stable: ties by op index); throws input_error naming a cycle.
    std::vector<int> topological_order() const;

    /// Totals over all ops.
    op_cost total() const;
    double parameter_count() const;

private:
    std::vector<op_node> m_ops;
    std::vector<tensor_info> m_tensors;
    std::map<std::string, int> m_tensor_index;
    graph_storage m_g;
};

}  // namespace tessel
