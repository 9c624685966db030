// Shape inference and shape checking for every op type in the catalog. Loaders add ops with their inputs,
// then call infer_op in topological order; an inconsistent graph (inner dimensions that differ, shapes that
// do not broadcast, a declared shape that disagrees) is an input_error naming the op, both shapes and where
// the op was written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/workload/graph.h"

namespace tessel {

using shape_t = std::vector<std::int64_t>;

/// Infers op `index`'s output shapes and data types from its inputs and attributes and stores them in the
/// output tensors. Where declared[t] is non-zero, tensor t's shape was written by the user: it is checked
/// against the inferred one instead, and ops whose output shape cannot follow from their inputs (reshape
/// without a shape, generic and shape_only ops) take it from there.
void infer_op(workload_graph& g, int index, const std::vector<char>& declared = {});

/// Numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<shape_t> broadcast_shapes(const shape_t& a, const shape_t& b);
/// "64x1024", "scalar" for rank 0.
std::string shape_str(const shape_t& s);
/// Axis in [0, rank) from a possibly negative one; nullopt when out of range.
std::optional<int> normalise_axis(std::int64_t axis, size_t rank);
/// Output shape of a slice with ONNX semantics (clamped starts and ends, negative steps).
shape_t slice_shape(const shape_t& in, const std::vector<std::int64_t>& starts, const std::vector<std::int64_t>& ends,
                    const std::vector<std::int64_t>& axes, const std::vector<std::int64_t>& steps);
/// Start index of each sliced axis after clamping, as slice_shape computes it (for index arithmetic).
std::int64_t slice_start(std::int64_t start, std::int64_t dim, std::int64_t step);

}  // namespace tessel
