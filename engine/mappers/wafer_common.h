// What the wafer-scale mappers (wafer_pipeline, wafer_streaming, wafer_stencil) share: finding the wafer's parts
// on a platform (the `wafer_pe_array`, the `mesh_noc` fabric it attaches to, the `wafer_memoryx` on its edge),
// the geometry of rectangles of PEs, and a reading of the workload graph in wafer terms.
//
// Geometry. Data enter a rectangle of PEs along *lines*: the direction of a route's last leg (x for yx routing,
// y for xy), so one transfer from anywhere on the wafer to the far end of a line crosses the whole line and its
// routers copy the stream to every PE on the way (a multicast, as the WSE's routers do by colour). Partial sums
// and statistics move across the lines, along *columns*. Line l of a rectangle carries the feature slice
// [l/L, (l+1)/L) of what streams in; column s holds the output slice [s/S, (s+1)/S) of a matrix product.
//
// Graph reading. Views (is_view, the workload's one rule for every mapper: reshape, flatten, squeeze,
// unsqueeze, shape_only) cost nothing: a consumer reads through them from the tensors' origins (the ops that
// produced the data, a graph input arriving from outside, or resident weights and state). Every other op is
// planned, data movement included (transpose, concat, split, slice, copy, cast: a vector op that streams its
// bytes through its rectangle). A matrix product (matmul, conv2d as its implicit GEMM, fused attention) keeps
// one operand stationary in SRAM (its weights, or for a product of two activations the second one, e.g. the
// keys) while the other streams through; any other op streams all its activations through and keeps only its
// small parameters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/mappers/mapper.h"
#include "models/core/compute_model.h"
#include "models/core/pe_grid.h"
#include "models/core/rect.h"
#include "models/interconnect/interconnect.h"

namespace tessel::wafer {

/// Options every wafer mapper reads.
struct common_options {
    std::string pes;     // group of the PE array (default: the first wafer_pe_array)
    std::string memory;  // group of the MemoryX service (default: the first wafer_memoryx, if any)
    std::int64_t chunks = 4;
    byte_size reserved;  // per PE, for code and runtime buffers
    void declare(param_decl& d);
};

/// A rectangle of PEs [x0, x1) x [y0, y1).
using rect = grid_rect;

/// A rectangle of PEs that compute steps run on in lockstep, and its payload in the program (grid_span.h), which
/// every step on it shares.
struct span {
    rect r;
    std::uint32_t payload = ~0u;
};

/// Adds span `r` to program `p` (as a payload its steps share).
span add_span(program& p, const rect& r);

/// The wafer a mapper works on: found by capability (a PE grid on a dimension-ordered mesh, a memory on its
/// edge), not by kind.
struct fabric {
    const platform* plat = nullptr;
    const component* pe_array = nullptr;      // the component holding the PEs
    const pe_grid* pes = nullptr;             // its PE grid: size and units
    const compute_model* pe_model = nullptr;  // one PE's timing
    pe_grid::paths paths;                     // one PE's SRAM ports and ramp
    std::string pe_group;
    const interconnect* noc = nullptr;
    const component* mx = nullptr;  // the memory service on the edge (MemoryX), or nullptr
    int W = 0, H = 0;
    bool stream_x = true;                        // lines run along x (yx routing) or along y (xy routing)
    double link_bpc = 0;                         // fabric link bytes per PE cycle
    double usable = 0;                           // SRAM per PE minus the reserved bytes
    std::vector<std::int32_t> mx_port_of_cross;  // MemoryX port nearest to each cross coordinate
    std::vector<int> mx_port_pos;                // each MemoryX port's position along the lines
    std::vector<int> mx_port_cross;              // and across them

    /// Finds the parts (errors name what is missing and the option that selects it).
    static fabric find(const platform& plat, const common_options& o, const std::string& who);

    endpoint pe(int x, int y) const { return endpoint{pe_array->id(), pes->unit_of(x, y), 0}; }
    /// A compute step of `work` on every PE of span `s` in lockstep (the step names the span's first PE).
    std::uint32_t compute_on(program& p, std::uint32_t op, const span& s, std::uint32_t work,
                             const std::vector<std::uint32_t>& deps) const;
    endpoint mx_port(std::int32_t port) const { return endpoint{mx->id(), port, 0}; }

    // Stream coordinates of a rectangle: `lines` across, `length` along.
    int lines(const rect& r) const { return stream_x ? r.y1 - r.y0 : r.x1 - r.x0; }
    int length(const rect& r) const { return stream_x ? r.x1 - r.x0 : r.y1 - r.y0; }
    int pos0(const rect& r) const { return stream_x ? r.x0 : r.y0; }
    int cross0(const rect& r) const { return stream_x ? r.y0 : r.x0; }
    /// The PE at line `l`, position `p` (both from the rectangle's corner).
    endpoint at(const rect& r, int l, int p) const {
        return stream_x ? pe(r.x0 + p, r.y0 + l) : pe(r.x0 + l, r.y0 + p);
    }
    /// Position along the lines of a PE (its x for yx routing).
    int pos_of(std::int32_t unit) const { return stream_x ? unit % W : unit / W; }
    int cross_of(std::int32_t unit) const { return stream_x ? unit / W : unit % W; }
    /// The first `len` PEs of line `l` as a span of the PE array.
    rect line_span(const rect& r, int l, int len) const {
        return stream_x ? rect{r.x0, r.y0 + l, r.x0 + len, r.y0 + l + 1}
                        : rect{r.x0 + l, r.y0, r.x0 + l + 1, r.y0 + len};
    }
    rect used_span(const rect& r, int lines_used, int len) const {
        return stream_x ? rect{r.x0, r.y0, r.x0 + len, r.y0 + lines_used}
                        : rect{r.x0, r.y0, r.x0 + lines_used, r.y0 + len};
    }
    /// A rectangle from stream coordinates (lines across, length along), at a corner.
    rect from_stream(int cross_start, int lines, int pos_start, int len) const {
        return stream_x ? rect{pos_start, cross_start, pos_start + len, cross_start + lines}
                        : rect{cross_start, pos_start, cross_start + lines, pos_start + len};
    }
};

/// Where the bytes of a tensor come from, through views.
struct origin {
    int producer = -1;      // index of the planned op that produced them
    int input = -1;         // or a graph input tensor (streamed in from outside)
    bool resident = false;  // or weights / state kept on the wafer
    bool weight = false;    // (resident) parameters rather than state
    double fraction = 0;    // share of the tensor's bytes
};

/// A flow into a planned op: `bytes` of the op's input from one origin.
struct source {
    int producer = -1;
    int input = -1;
    double bytes = 0;
};

enum class op_style { gemm, vector };

/// A planned op in wafer terms (whole-op totals; mappers divide them over chunks and PEs).
struct op_info {
    int op = -1;
    std::string name;
    std::string kind;
    op_style style = op_style::vector;
    dtype type = dtype::fp16;
    double eb = 2;  // bytes per element
    double macs = 0, vec = 0;
    std::int64_t M = 0, N = 0, K = 0, batch = 1;  // GEMM view; M counts every streamed row
    double out_bytes = 0;
    std::vector<source> streamed;    // activations streaming through
    std::vector<source> stat_flows;  // a stationary activation arriving from other ops (keys, values)
    double weight_bytes = 0;         // stationary parameters
    double resident_bytes = 0;       // stationary state (KV cache) kept on the wafer
    double stat_act_bytes = 0;       // stationary activation bytes (sum of stat_flows)
    bool stats_reduce = false;       // softmax / norms / reductions: statistics combined across lines
    bool table = false;              // embedding or gather: reads rows of a stationary table
    std::int64_t row_cap = 1;        // most lines that get distinct features
    std::int64_t col_cap = 1;        // most columns that get distinct outputs
    std::int64_t out_rows = 1;       // rows of the output, for chunking
    double features_in = 1;          // features per streamed row
    double features_out = 1;         // features per output row
    bool graph_output = false;
    int out_tensor = -1;
    double in_bytes() const;  // streamed bytes in total
    double stationary_bytes() const { return weight_bytes + resident_bytes + stat_act_bytes; }
};

struct analysis {
    std::vector<op_info> ops;  // planned ops in topological order
    std::vector<std::string> notes;
    double samples = 1;
};

/// Reads the graph: plans every op that computes or moves data, folds views into origins. Throws input_error
/// for ops the wafer cannot run (a data type without a rate).
analysis analyse(const workload_graph& g, const compute_model& pe);

/// Where a stream from position `src_pos` (along the lines) enters a line of `len` PEs of rectangle `r`: the far
/// end (index len - 1 or 0, away from the source, so the stream crosses the whole line), or both ends when the
/// source sits inside the line's span.
std::vector<int> line_ends(const fabric& f, int src_pos, const rect& r, int len);

/// A transfer of `bytes` from `from` to the far end of line `l` of rectangle `r` (line_ends).
void to_line(program& p, const fabric& f, std::uint32_t op, endpoint from, const rect& r, int l, int len, double bytes,
             const std::vector<std::uint32_t>& deps, std::vector<std::uint32_t>& out);

/// Bytes as a whole number for a transfer (at least one when there is anything to move).
std::uint64_t whole_bytes(double bytes);

/// Overlap of [a0, a1) and [b0, b1).
inline double overlap(double a0, double a1, double b0, double b1) {
    const double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0.0;
}

/// "1.2 us" etc. for notes.
std::string cycles_text(double cycles, const clock_domain& clk);

/// What a mapper planned for one op, kept for explain(): which steps start it and which mark each chunk done.
struct op_record {
    std::string name;
    std::string kind;
    int chunks = 1;
    std::vector<std::uint32_t> start_steps;  // its first compute steps
    std::vector<std::uint32_t> chunk_done;   // one step per chunk (a join over the chunk's outputs)
    std::string limit;                       // what the plan expected to bound it
    double planned_cycles = 0;               // planned cycles per chunk
    std::int64_t pes = 0;
};

/// What a wafer mapper planned (the ops' steps, chunks and expected limits), its mapping record: the wafer
/// explainer (engine/report/explain/wafer.cpp) measures each op's interval and the pipeline's steady state from it.
struct plan_report : mapping_record {
    std::string mode;  // "layer-pipelined", "weight streaming", "stencil"
    std::vector<op_record> ops;
    double samples = 1;
    double chunks = 1;  // pieces of the batch the ops overlap on (pipelined)
    clock_domain clk;
};

}  // namespace tessel::wafer
