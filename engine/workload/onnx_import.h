// ONNX import with Debian's libonnx (C++ protobuf). Weights are not needed: initializers give dims and types,
// and their data may point to external files that are absent. Shapes come from tessel's own inference (the
// op catalog) with constant propagation of the shape arithmetic PyTorch exports (Shape, Gather, Concat,
// Range...), so models at opsets newer than libonnx knows import too; value_info, when present, is checked
// against it and gives the shapes of ops tessel does not know. An unknown op becomes a generic op costed by
// its tensor sizes and is listed in the import report, or is an error with `strict`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/workload/graph.h"
#include "engine/workload/source.h"
#include "engine/workload/workload_params.h"

namespace tessel {

struct onnx_import_options {
    /// --set workload.KEY=VALUE pairs: precision, one per symbolic dimension (dim_param), training, fuse.
    std::map<std::string, std::string> overrides;
    /// Reject the model when it has ops tessel does not know, instead of importing them as generic ops.
    bool strict = false;
};

struct onnx_import_report {
    std::string file;
    std::string producer;  // "pytorch 1.13.0"
    std::int64_t opset = 0;
    std::int64_t nodes = 0;
    std::map<std::string, int> op_types;  // ONNX op type -> nodes
    struct unknown_op {
        std::string op_type;             // with its domain when not the default one
        std::vector<std::string> nodes;  // node names
    };
    std::vector<unknown_op> unknown;             // imported as generic ops (costed by tensor sizes only)
    std::map<std::string, std::string> symbols;  // symbolic dimension -> value used
    std::string static_shapes;  // no input has a symbolic dimension: the inputs' fixed shapes and what to do (a note)
    int folded = 0;             // nodes computing shapes or constants (cost nothing)
    int aliased = 0;            // Identity, Dropout and weight layout changes
    std::vector<std::string> notes;
};

struct onnx_import_result {
    workload_graph graph;  // the forward graph, before the training and fuse options
    onnx_import_report report;
    workload_params params;  // precision, symbolic dimensions, training, fuse as resolved
};

/// Imports an ONNX model file; bad files (not ONNX, truncated, missing tensors, shape mismatches) are an
/// input_error naming the file and the node.
onnx_import_result import_onnx(const std::string& path, const onnx_import_options& options);

/// An ONNX model read and parsed once, imported at each build's overrides (not strict), then the common options.
std::shared_ptr<const workload_source> make_onnx_source(const std::string& path);

/// load_workload's path for .onnx files: import (not strict), then the common options (training, fuse).
workload_graph load_onnx_workload(const std::string& path, const std::map<std::string, std::string>& overrides);

/// The import report as text: op types with counts, unknown ops with their nodes, symbols, notes.
std::string format_import_report(const onnx_import_report& r);

}  // namespace tessel
