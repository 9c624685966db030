// The catalog of op types a workload graph may contain: for each, its kind, the inputs it takes, its
// attributes (name, type, default, meaning) and its per-element FLOP count. The YAML loader, the generators,
// the ONNX importer, shape inference, the cost rules and the docs all read this one table, so an op type is
// declared once. Backward ops are named "<type>_grad" and resolve to their forward entry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/workload/graph.h"

namespace tessel {

enum class attr_type : std::uint8_t {
    integer,   // one whole number (stored in int_attrs as a single value)
    integers,  // a list of whole numbers
    boolean,   // true/false (stored in int_attrs as 0/1)
    number,    // a real number (float_attrs)
    text       // a word (str_attrs); dtype names for `to`
};
const char* attr_type_name(attr_type t);

struct attr_spec {
    std::string name;
    attr_type type = attr_type::integer;
    std::string default_value;  // "" when the attribute is required or has no default (see `required`)
    bool required = false;
    std::string doc;
    std::vector<std::string> choices;  // text attributes: the words allowed (empty: any)
};

struct op_type_info {
    std::string name;
    op_kind kind = op_kind::generic;
    int min_inputs = 1;
    int max_inputs = 1;  // -1: any number
    /// FLOPs per element, the unit depending on the kind (see cost.cpp): per output element for elementwise,
    /// per input element for reductions, per element for softmax and norms, per parameter for optimizers.
    double flops_per_element = 0;
    /// FLOPs per element of the output gradient in the "<type>_grad" backward op (matmul and conv2d derive
    /// their backward ops from their own GEMMs instead).
    double grad_flops_per_element = 0;
    std::vector<attr_spec> attrs;
    std::string doc;
};

/// All op types, in documentation order.
const std::vector<op_type_info>& op_types();
/// The entry for `name`, or for its forward op when `name` ends in "_grad"; nullptr when unknown.
const op_type_info* find_op_type(std::string_view name);
/// True for "<type>_grad" names of backward ops (other than the dedicated conv2d_grad_* types).
bool is_grad_type(std::string_view name);
/// Names of all op types (for did-you-mean suggestions).
std::vector<std::string> op_type_names();
op_class op_class_of(op_kind k);

/// Attribute access with the catalog's defaults already applied (apply_attr_defaults does that on creation).
std::int64_t attr_int(const op_node& op, const std::string& name, std::int64_t fallback = 0);
std::vector<std::int64_t> attr_ints(const op_node& op, const std::string& name);
double attr_number(const op_node& op, const std::string& name, double fallback = 0);
std::string attr_text(const op_node& op, const std::string& name, const std::string& fallback = {});
bool has_attr(const op_node& op, const std::string& name);

/// Fills the catalog defaults for attributes the op does not set, normalises list forms (a stride of [2]
/// becomes [2, 2], a padding of [1] becomes [1, 1, 1, 1]) and checks required ones; errors name the op.
void apply_attr_defaults(op_node& op);

/// "op 'fc1' (matmul)" for messages.
std::string describe_op(const op_node& op);

/// Whether an op is a view: its outputs are its input's data under another shape, so no mapper moves or
/// computes anything for it and its outputs share their input's storage (view_source). Decided here, once, for
/// every mapper, so that an op is free or costed by one rule everywhere.
///
/// Views are the metadata-only ops: reshape, flatten, squeeze and unsqueeze (kind reshape), shape_only ops
/// (Shape, Constant, Identity, shape arithmetic folded at import), and any op whose cost is nothing at all (no
/// FLOPs, no bytes read or written: every tensor it touches is a constant or empty).
///
/// Transpose, concat, split and slice are not views. In a dense row-major layout each of them produces data in
/// an order or a place its input does not have: a transpose permutes every element, a concat and a split copy
/// their parts into new contiguous buffers, a slice copies its window out. They read and write what the op
/// catalog says they do, and every mapper costs them as data movement: a copy kernel on a GPU or TPU, a superstep
/// on the IPU, an SXM stream on the TSP, a PMU stage on the RDU, a vector op on a wafer rectangle or a mesh of
/// tiles. Whether a consumer could read such an input in place instead (a matrix product taking a transposed
/// or sliced operand by strides, a dataflow fabric routing a permutation) is a property of that consumer on that
/// machine, not of the op: a mapper may fold one into its consumer as its own documented policy (the kernels
/// mapper's strided_views), never by calling it a view.
bool is_view(const op_node& op);

/// The input whose data a view's outputs are: its first input that is not a constant; -1 when it has none.
int view_source(const workload_graph& g, const op_node& op);

}  // namespace tessel
