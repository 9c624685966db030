// The tsp mapper's scheduler (see tsp_mapper.h for the algorithm): fixes every instruction of a workload to a
// cycle, a slice and its stream registers: where tensors live in the MEM slices, which elementwise ops run in a
// matrix product's epilogue, the MXM passes of matrix products and the VXM or SXM streams of every other op.
// tsp_mapper.cpp turns its records into the program.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/mappers/toolkit/liveness.h"
#include "engine/mappers/tsp_mapper.h"
#include "models/streaming/tsp.h"

namespace tessel::tsp_sched {

using instr = tsp::instruction;

/// Stream register bands (per direction), one owner each, so that flows never collide (see the header). With P
/// planes per hemisphere and W weight streams per plane (GroqChip 1: P = 2, W = 4, 30 of its 32 streams):
///   activations into the west planes: westward [act_w, +P); into the east planes: eastward [act_e, +P);
///   results of the west planes to the VXM: eastward [res_w, +P); of the east planes: westward [res_e, +P);
///   weight rows into plane q of a side: [weights + q W, +W) (westward for the west planes, eastward for the east);
///   epilogue outputs of plane p (of 2P) to MEM: [epilogue + p]; element-op chain c: inputs [vec_in + 2c, +2),
///   output [vec_out + c]; switch-unit chains (west, east): [sxm_flow, +2).
struct stream_bands {
    static constexpr int vector_chains = 4;  // parallel MEM -> VXM -> MEM chains for element-wise ops
    std::int16_t act_w = 0, act_e = 0, res_w = 0, res_e = 0, weights = 0, epilogue = 0, vec_in = 0, vec_out = 0,
                 sxm_flow = 0;
    std::int64_t needed = 0;  // stream registers per direction
    std::int64_t alus = 0;    // VXM ALUs: one per element-op chain and one per plane's epilogue

    explicit stream_bands(const tsp::timing& tm);
};

/// One scheduled instruction, its work, and its op (an index into scheduler::op_names). Producers and `after`
/// index scheduler::records.
struct rec {
    instr in;
    work w;
    std::uint32_t op = 0;
};

struct tensor_store {
    std::vector<std::uint32_t> slices;  // MEM units holding it, evenly
    double bytes = 0;
    std::int64_t ready = 0;      // cycle its last write ends
    std::uint32_t writer = ~0u;  // the instruction that ends last
    bool live = false;
};

/// Schedules one workload on one chip: run() fills the public members, in the order instructions were scheduled.
class scheduler {
public:
    scheduler(const workload_graph& g, const tsp& chip, const tsp_mapper::options& o);

    std::vector<rec> records;
    std::vector<std::string> op_names;
    std::vector<std::string> notes;
    nlohmann::json details;
    std::vector<std::tuple<std::string, std::int64_t, std::int64_t, std::string>> spans;

    /// Schedules every op in topological order (`platform_name` names the chip in errors).
    void run(const std::string& platform_name);

private:
    const workload_graph& m_g;
    const tsp::timing& m_tm;
    const tsp_mapper::options& m_opt;
    stream_bands m_bands;
    std::string m_platform;
    std::vector<std::array<std::int64_t, 2>> m_free;  // per unit and port
    std::vector<double> m_slice_used;
    std::vector<tensor_store> m_store;
    toolkit::tensor_liveness m_liveness;  // each tensor's storage (views and fused epilogues resolved), reads left
    std::vector<int> m_fused_into;        // op -> the gemm op whose epilogue runs it (-1)
    std::vector<double> m_epilogue_ops;   // per gemm op: extra element ops per output element
    std::vector<int> m_residual;          // per gemm op: the second operand its epilogue streams from MEM (-1)
    std::vector<std::vector<std::int64_t>> m_plane_passes;  // per plane: end cycle of each matmul pass
    // Per plane's epilogue band, per direction (0 west, 1 east): the cycle the last result written that way has
    // left the VXM. A fused residual flows toward the VXM on the same band, so one arriving from the side an
    // earlier result went to must come after it.
    std::vector<std::array<std::int64_t, 2>> m_epilogue_clear;
    double m_vector_bytes = 320, m_capacity = 0, m_live = 0, m_peak_mem = 0;
    std::uint32_t m_cursor = 0;
    int m_fused = 0;

    int root(int t) const { return m_liveness.root(t); }
    const tensor_info& ti(int t) const { return m_g.tensor(t); }
    bool persistent(int t) const {
        const auto r = ti(root(t)).role;
        return r == tensor_role::weight || r == tensor_role::state;
    }
    std::int64_t vectors(double bytes) const {
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(bytes / m_vector_bytes)));
    }
    std::int32_t pos(std::uint32_t u) const { return m_tm.position[u]; }
    std::int32_t dist(std::uint32_t a, std::int32_t p) const { return m_tm.distance(pos(a), p); }
    bool west_side(std::uint32_t u) const { return pos(u) < m_tm.vxm_position; }

    std::uint32_t op_id(const std::string& name) {
        op_names.push_back(name);
        return static_cast<std::uint32_t>(op_names.size() - 1);
    }

    std::uint32_t add(const instr& i, const work& w, std::uint32_t op) {
        records.push_back(rec{i, w, op});
        return static_cast<std::uint32_t>(records.size() - 1);
    }

    // ---- memory ---------------------------------------------------------------------------------------------
    std::string largest_live(size_t n) const;
    void allocate(int t, size_t want);
    void free_tensor(int t);
    std::string narrower(double total, double cap) const;
    void place_persistent();
    void release(int o);
    void alias_view(int o);
    void alias_output(int o, int host);
    void plan_fusion();
    std::uint32_t slice_of(int t, std::int64_t chunk, std::uint32_t avoid = ~0u) const;
    std::uint32_t read_slice(int t, std::int64_t chunk, std::int32_t to) const;
    std::uint32_t mem_read(std::uint32_t slice, std::int64_t cycle, std::int64_t vectors, std::int64_t spacing,
                           std::uint32_t after, const tsp::stream_use& out, std::string name, dtype type,
                           std::uint32_t opi);
    std::uint32_t residual_slice(int r, std::uint32_t wslice) const;
    std::uint32_t side_slice(int t, int r) const;
    void produced(int t, std::uint32_t write, std::int64_t end);

    // ---- matrix products -------------------------------------------------------------------------------------
    /// A matrix product being scheduled: its blocks (dim x dim: kb of k, nb of n; m in mchunks row chunks), its
    /// operands, result and residual, its epilogue, and its last cycle and passes so far.
    struct gemm_job {
        const op_node& op;
        dtype type;
        std::int64_t dim, batch, m, n, k, kb, nb, mchunks;
        int a_in, b_in, out, res;
        double f;                       // element operations per result element: requantise/round, plus fused ops
        std::int64_t ops_per, spacing;  // the epilogue's operations per element, its cycles per vector
        std::uint32_t opi;
        const tensor_store& a_store;
        const tensor_store& b_store;
        std::int64_t last;
        std::int64_t passes;
    };
    /// A work item of a gemm_job: batch entry bi, block j of N columns, chunk mc of M rows, and its plane.
    struct gemm_item {
        std::int64_t bi, j, mc;
        size_t pi;
    };
    /// One pass: a work item's K block l on its plane.
    struct gemm_pass {
        std::int64_t bi, j, mc, l;
        size_t pi;            // the plane's index in mxm_units
        std::uint32_t plane;  // its unit
        bool west;            // on the west of the VXM
        int q;                // its index on its side
        std::int64_t rows, ncols, krows;
        std::uint32_t alu;     // the epilogue's VXM ALU
        std::uint32_t wslice;  // the slice the result rows go to
        bool emit;             // the last K block: the result goes through the epilogue to MEM
        std::int64_t sp;       // cycles per vector
        std::int32_t d_res;    // from the plane to the VXM
        std::int32_t d_out;    // from the VXM to the write slice
    };
    void gemm(int o);
    void schedule_pass(gemm_job& job, const gemm_item& it, std::int64_t l);
    std::pair<std::uint32_t, std::int64_t> install_weights(const gemm_job& job, const gemm_pass& p);
    void matmul_pass(gemm_job& job, const gemm_pass& p, std::uint32_t wrec, std::int64_t wend);
    void epilogue(gemm_job& job, const gemm_pass& p, std::int64_t cm, const tsp::stream_use& result,
                  std::uint32_t mrec);

    // ---- everything else: MEM -> VXM or SXM -> MEM ---------------------------------------------------------------
    void stream_op(int o);
};

}  // namespace tessel::tsp_sched
