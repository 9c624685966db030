// Checked arithmetic for sizes, counts and times that user input multiplies (tensor shapes, GEMM sizes,
// replicas, packets, bytes). Overflow is bad input, not a wrapped number: each helper throws an input_error
// naming what was being computed, the operands and the limit, at the input's location when there is one.
// Counts are kept below 2^53 (k_max_count) so that they stay exact when a cost model turns them into doubles.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/error.h"

namespace tessel {

/// The largest count, size in bytes or element count tessel accepts: 2^53, exact in a double.
constexpr std::int64_t k_max_count = std::int64_t{1} << 53;

/// a * b for non-negative counts; throws input_error "WHAT: A x B is more than 2^53" on overflow.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& what, const source_location& where = {});
/// a + b for non-negative counts, with the same check.
std::int64_t checked_add(std::int64_t a, std::int64_t b, const std::string& what, const source_location& where = {});
/// The product of a shape's dimensions (1 for a scalar). A negative dimension or a product beyond k_max_count
/// throws, naming `what` and the shape.
std::int64_t checked_elements(const std::vector<std::int64_t>& shape, const std::string& what,
                              const source_location& where = {});
/// A double that must be a whole count in [0, k_max_count] (a number of bytes, packets, steps): NaN,
/// infinities, negatives and values beyond 2^53 throw, naming `what`.
std::int64_t checked_count(double v, const std::string& what, const source_location& where = {});
/// A double that must be a whole number in int's range (an index or offset; callers check their own bounds):
/// NaN, infinities, fractions and magnitudes beyond 2^31 - 1 throw, naming `what`.
int checked_int(double v, const std::string& what, const source_location& where = {});

}  // namespace tessel
