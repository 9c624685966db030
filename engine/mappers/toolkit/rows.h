// A tensor as mappers stream and spread it: rows of its last dimension (its features). The RDU streams a stage
// in tiles of its rows; the wafer spreads rows over columns of PEs and features over lines.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/workload/graph.h"

namespace tessel::toolkit {

/// The last dimension's size (1 for a scalar).
inline std::int64_t last_dim(const tensor_info& t) {
    return t.shape.empty() ? 1 : std::max<std::int64_t>(1, t.shape.back());
}

/// Rows: the elements over the last dimension, at least 1.
inline std::int64_t rows_of(const tensor_info& t) { return std::max<std::int64_t>(1, t.elements() / last_dim(t)); }

}  // namespace tessel::toolkit
