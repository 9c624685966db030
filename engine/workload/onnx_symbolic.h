// An imported ONNX model written as a YAML workload whose symbolic dimensions (dim_param: batch, seq) stay
// workload parameters, so an edited import still runs at any batch: `--set workload.batch=32`.
// The model is imported again at other values of its symbols; every number of the YAML that changes between
// the imports is fitted to c + a*s + b*q + m*s*q (s, q the symbols) and written as that expression, and the
// result is read back at each value and must give the graph that the import gave there. A model whose sizes do
// not follow that form (three symbols or more, a size quadratic in one) keeps fixed shapes and says why.
#pragma once

#include <string>

#include "engine/workload/onnx_import.h"

namespace tessel {

struct onnx_yaml {
    std::string text;       // the YAML workload
    std::string fixed_why;  // empty when the symbols are parameters; else why the shapes are fixed
};

/// The YAML workload for `model` imported as `base` (with `options`), its symbols kept as parameters.
onnx_yaml onnx_workload_yaml(const std::string& model, const onnx_import_options& options,
                             const onnx_import_result& base);

}  // namespace tessel
