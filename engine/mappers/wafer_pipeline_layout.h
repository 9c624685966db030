// Sizing and layout for the `wafer_pipeline` mapper (wafer_pipeline.h): what each op needs per chunk and the fewest
// PEs that hold it, a common time per chunk whose PE counts fill the wafer, and the rectangles that recursive
// bisection of the wafer gives the ops in topological order, grown until each holds its op's SRAM.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/mappers/wafer_common.h"

namespace tessel::wafer {

/// An op's demands per chunk, in PE cycles: `work` spread over its PEs, `in` over its lines, `out` over its
/// columns (a matrix product's partial sums) or its lines (anything else's output).
struct estimate {
    int chunks = 1;
    double work = 0, in = 0, out = 0;
    std::string work_limit;  // "datapath" or "SRAM bandwidth"
};

/// What each op needs, and whether the model fits at all (assess_fit).
struct demand {
    std::vector<estimate> est;
    std::vector<std::int64_t> pmin;  // the fewest PEs that hold each op
    std::int64_t need = 0;           // PEs for all of them (more than the wafer when one op fits nowhere)
    double stationary = 0;           // weights and state
    std::string worst_op;            // why an op fits in no rectangle, when one does not
};

/// Each op's estimate and fewest PEs, in `chunks` chunks, until one op fits in no rectangle.
demand assess_fit(const analysis& an, const fabric& f, std::int64_t chunks);

/// Lines and columns an op uses in a rectangle.
std::pair<int, int> lines_and_columns(const op_info& o, const fabric& f, const rect& r);

/// Working bytes per PE: one streamed row and one output row in flight, double buffered.
double working_bytes(const op_info& o, int L, int S);

/// Balance: the smallest time per chunk T whose PE counts fit the wafer; each op's PEs at that T.
std::vector<double> balance_pes(const analysis& an, const demand& d, std::int64_t total);

/// Layout: each op's rectangle (`rects`) by recursive bisection of the wafer with `weight`, earlier ops to the left
/// or below; then check every op's SRAM in the rectangle it got, grow the ones that fall short and retry. False
/// when no try gives every op enough.
bool lay_out_rects(const analysis& an, const fabric& f, std::vector<double>& weight, std::vector<rect>& rects);

}  // namespace tessel::wafer
