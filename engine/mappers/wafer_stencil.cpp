#include "engine/mappers/wafer_stencil.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "engine/mappers/toolkit/sram_ledger.h"

namespace tessel {

void wafer_stencil_mapper::options::declare(param_decl& d) {
    common.declare(d);
    d(segment, "segment", "32",
      "hops one halo transfer covers along a row or column (fewer: more steps, less latency in the model)",
      bound::positive);
    d.choice(
        matrix, "matrix", "diagonals", {"diagonals", "constant"},
        "the operator's coefficients: 7 stored per grid point (diagonals, like the finite-volume matrix of Rocki et "
        "al.), or 7 constants kept in registers");
    d.choice(dot_precision, "dot_precision", "workload", {"workload", "fp32"},
             "type dot products multiply and accumulate in: the workload's precision, or fp32 (mixed precision)");
}

namespace {

bool is_grid(const tensor_info& t, const std::vector<std::int64_t>& shape) { return t.shape == shape; }

bool is_scalar(const tensor_info& t) { return t.elements() == 1; }

/// The grid and how it sits on the wafer.
struct stencil_grid {
    std::vector<std::int64_t> shape;
    std::int64_t nx = 0, ny = 0, nz = 0;
    std::int64_t bx = 1, by = 1;  // columns per PE along x and y
    int gx = 0, gy = 0;           // PEs it occupies along x and y
    double points = 0;            // grid points per PE
    dtype type = dtype::fp32;
    double eb = 4;  // bytes per element
};

/// The grid (the first 3D tensor) and its place on the wafer; throws input_error for a workload that is no
/// stencil code.
stencil_grid find_grid(const workload_graph& g, const wafer::fabric& f, const std::string& who) {
    stencil_grid sg;
    std::vector<std::int64_t>& grid = sg.shape;
    for (const auto& t : g.tensors())
        if (t.shape.size() == 3) {
            grid = t.shape;
            break;
        }
    if (grid.empty())
        throw input_error(who + ": workload '" + g.name +
                          "' has no nx x ny x nz grid; this mapper runs 3D stencil codes "
                          "(generator stencil); use mapper.impl=wafer_pipeline for other workloads");
    const std::int64_t nx = grid[0], ny = grid[1], nz = grid[2];
    for (const auto& op : g.ops()) {
        if (op.kind == op_kind::shape_only) continue;
        for (int t : op.outputs)
            if (!is_grid(g.tensor(t), grid) && !is_scalar(g.tensor(t)))
                throw input_error(who + ": op '" + op.name + "' (" + op.type + ") makes a " + g.tensor(t).shape_str() +
                                  " tensor; a stencil code here works on its " + std::to_string(nx) + "x" +
                                  std::to_string(ny) + "x" + std::to_string(nz) + " grid and on scalars");
        if (op.kind == op_kind::matmul || op.kind == op_kind::conv2d || op.kind == op_kind::attention)
            throw input_error(who + ": op '" + op.name + "' is a " + op_kind_name(op.kind) +
                              "; use mapper.impl=wafer_pipeline");
    }
    sg.nx = nx;
    sg.ny = ny;
    sg.nz = nz;
    // Columns per PE: one, or a block when the grid is wider than the wafer.
    sg.bx = (nx + f.W - 1) / f.W;
    sg.by = (ny + f.H - 1) / f.H;
    sg.gx = static_cast<int>((nx + sg.bx - 1) / sg.bx);
    sg.gy = static_cast<int>((ny + sg.by - 1) / sg.by);
    const double cols = static_cast<double>(sg.bx * sg.by);
    sg.points = cols * static_cast<double>(nz);
    sg.type = [&] {
        for (const auto& t : g.tensors())
            if (t.shape == grid) return t.type;
        return dtype::fp32;
    }();
    sg.eb = dtype_bits(sg.type) / 8.0;
    return sg;
}

/// The most grid vectors alive at once (an elementwise update writes over an input it is the last reader of).
int peak_vectors(const workload_graph& g, const std::vector<std::int64_t>& grid, const std::vector<int>& order) {
    std::vector<int> last_use(g.tensors().size(), -1);
    for (size_t i = 0; i < order.size(); ++i)
        for (int t : g.op(order[i]).inputs) last_use[static_cast<size_t>(t)] = static_cast<int>(i);
    int live = 0, peak = 0;
    for (size_t t = 0; t < g.tensors().size(); ++t) {
        const auto& ti = g.tensors()[t];
        if (is_grid(ti, grid) && (ti.role == tensor_role::state || ti.role == tensor_role::input)) ++live;
    }
    peak = live;
    for (size_t i = 0; i < order.size(); ++i) {
        const op_node& op = g.op(order[i]);
        int dying = 0;
        bool reused = false;
        for (int t : op.inputs)
            if (is_grid(g.tensor(t), grid) && last_use[static_cast<size_t>(t)] == static_cast<int>(i) &&
                g.tensor(t).role != tensor_role::output)
                ++dying;
        for (int t : op.outputs) {
            if (!is_grid(g.tensor(t), grid)) continue;
            if (op.kind == op_kind::elementwise && op.type != "stencil7" && dying > 0 && !reused) {
                reused = true;  // in place
                --dying;
            } else {
                ++live;
            }
        }
        peak = std::max(peak, live);
        live -= dying;
    }
    return peak;
}

/// Emits the solver's ops, in topological order, as lockstep steps on the grid's span and transfers between PEs.
struct stencil_emitter {
    const workload_graph& g;
    const wafer::fabric& f;
    const stencil_grid& sg;
    program& prog;
    wafer_stencil_record& planned;
    wafer::span all;
    int chunks, seg;
    bool diagonals;
    dtype dot_type;
    std::vector<std::uint32_t> ready;  // per tensor: the step that made it (~0u: none)

    void emit(const std::vector<int>& order) {
        for (int o : order) {
            const op_node& op = g.op(o);
            if (op.kind == op_kind::shape_only || op.outputs.empty()) continue;
            const std::uint32_t opi = prog.intern_op(op.name);
            const std::uint32_t first = static_cast<std::uint32_t>(prog.steps.size());
            const tensor_info& outt = g.tensor(op.outputs.front());
            const std::vector<std::uint32_t> base = deps_of(op);
            std::uint32_t done;
            if (op.type == "stencil7")
                done = stencil7(op, opi, first, base);
            else if (op.type == "dot")
                done = dot(op, opi, first, base);
            else if (is_grid(outt, sg.shape))
                done = vector_update(op, opi, first, base);
            else
                done = scalar(op, opi, first, base);
            for (int t : op.outputs) ready[static_cast<size_t>(t)] = done;
        }
    }

private:
    std::vector<std::uint32_t> deps_of(const op_node& op) const {
        std::vector<std::uint32_t> d;
        for (int t : op.inputs)
            if (ready[static_cast<size_t>(t)] != ~0u) d.push_back(ready[static_cast<size_t>(t)]);
        return d;
    }
    void transfer(std::uint32_t op, int x0, int y0, int x1, int y1, double bytes, const std::vector<std::uint32_t>& d,
                  std::vector<std::uint32_t>& outv) {
        if (x0 == x1 && y0 == y1) return;
        outv.push_back(prog.add_transfer(op, f.pe(x0, y0), f.pe(x1, y1), wafer::whole_bytes(bytes), d));
    }
    void record(const std::string& phase, std::uint32_t first) {
        planned.phases.push_back(
            wafer_stencil_record::phase_record{phase, first, static_cast<std::uint32_t>(prog.steps.size())});
    }

    std::uint32_t stencil7(const op_node& op, std::uint32_t opi, std::uint32_t first,
                           const std::vector<std::uint32_t>& base) {
        // Halo exchange, z piece by z piece, overlapping the SpMV on the piece before.
        const double eb = sg.eb, points = sg.points;
        const std::int64_t bx = sg.bx, by = sg.by, nz = sg.nz;
        const int gx = sg.gx, gy = sg.gy;
        const double ew = static_cast<double>(by) * static_cast<double>(nz) / chunks * eb;
        const double ns = static_cast<double>(bx) * static_cast<double>(nz) / chunks * eb;
        work w;
        w.type = op.compute_type;
        w.cls = op.cost.cls;
        const double pts = points / chunks;
        w.macs = 6 * pts;  // 13 FLOPs a point: one multiply and six multiply-adds
        w.vector_ops = 1 * pts;
        w.bytes_in =
            (2 * static_cast<double>(by) + 2 * static_cast<double>(bx)) * static_cast<double>(nz) / chunks * eb;
        w.bytes_weight = pts * (diagonals ? 16.0 : 9.0) * eb;  // coefficients, own column, accumulators
        w.bytes_out = pts * 7.0 * eb;
        const std::uint32_t wi = prog.add_work(w);
        std::uint32_t prev = ~0u;
        for (int c = 0; c < chunks; ++c) {
            std::vector<std::uint32_t> halo;
            for (int y = 0; y < gy; ++y)
                for (int a = 0; a < gx - 1; a += seg) {
                    const int b = std::min(a + seg, gx - 1);
                    transfer(opi, a, y, b, y, ew, base, halo);
                    transfer(opi, b, y, a, y, ew, base, halo);
                }
            for (int x = 0; x < gx; ++x)
                for (int a = 0; a < gy - 1; a += seg) {
                    const int b = std::min(a + seg, gy - 1);
                    transfer(opi, x, a, x, b, ns, base, halo);
                    transfer(opi, x, b, x, a, ns, base, halo);
                }
            if (c == 0) halo.insert(halo.end(), base.begin(), base.end());
            if (prev != ~0u) halo.push_back(prev);
            prev = f.compute_on(prog, opi, all, wi, halo);
        }
        record("halo exchange and SpMV", first);
        return prev;
    }

    std::uint32_t dot(const op_node& op, std::uint32_t opi, std::uint32_t first,
                      const std::vector<std::uint32_t>& base) {
        const double eb = sg.eb, points = sg.points;
        const int gx = sg.gx, gy = sg.gy, xc = gx / 2, yc = gy / 2;
        work w;
        w.type = dot_type;
        w.cls = op.cost.cls;
        w.macs = points;
        w.bytes_weight = 2 * points * eb;
        const std::uint32_t local = f.compute_on(prog, opi, all, prog.add_work(w), base);
        record("local vector work", first);
        const std::uint32_t first_reduce = static_cast<std::uint32_t>(prog.steps.size());
        const double sb = 4;  // one fp32 partial sum: one wavelet
        std::vector<std::uint32_t> rows, col, bcast, back;
        for (int y = 0; y < gy; ++y) {
            transfer(opi, 0, y, xc, y, sb, {local}, rows);
            transfer(opi, gx - 1, y, xc, y, sb, {local}, rows);
        }
        const std::uint32_t rj = prog.add_delay(opi, 0, rows.empty() ? std::vector<std::uint32_t>{local} : rows);
        transfer(opi, xc, 0, xc, yc, sb, {rj}, col);
        transfer(opi, xc, gy - 1, xc, yc, sb, {rj}, col);
        const std::uint32_t cj = prog.add_delay(opi, 0, col.empty() ? std::vector<std::uint32_t>{rj} : col);
        transfer(opi, xc, yc, xc, 0, sb, {cj}, bcast);
        transfer(opi, xc, yc, xc, gy - 1, sb, {cj}, bcast);
        const std::uint32_t bj = prog.add_delay(opi, 0, bcast.empty() ? std::vector<std::uint32_t>{cj} : bcast);
        for (int y = 0; y < gy; ++y) {
            transfer(opi, xc, y, 0, y, sb, {bj}, back);
            transfer(opi, xc, y, gx - 1, y, sb, {bj}, back);
        }
        const std::uint32_t done = prog.add_delay(opi, 0, back.empty() ? std::vector<std::uint32_t>{bj} : back);
        record("all-reduce", first_reduce);
        return done;
    }

    std::uint32_t vector_update(const op_node& op, std::uint32_t opi, std::uint32_t first,
                                const std::vector<std::uint32_t>& base) {
        // A vector update: FMAs are multiply-adds, anything else element operations.
        const double eb = sg.eb, points = sg.points;
        work w;
        w.type = op.compute_type;
        w.cls = op.cost.cls;
        const double per_point = op.cost.flops / static_cast<double>(sg.nx * sg.ny * sg.nz);
        w.macs = op.type == "fma" ? points : 0.0;
        w.vector_ops = std::max(0.0, per_point * points - 2 * w.macs);
        int grid_inputs = 0;
        for (int t : op.inputs) grid_inputs += is_grid(g.tensor(t), sg.shape) ? 1 : 0;
        w.bytes_weight = grid_inputs * points * eb;
        w.bytes_out = points * eb;
        const std::uint32_t done = f.compute_on(prog, opi, all, prog.add_work(w), base);
        record("local vector work", first);
        return done;
    }

    std::uint32_t scalar(const op_node& op, std::uint32_t opi, std::uint32_t first,
                         const std::vector<std::uint32_t>& base) {
        // A scalar: every PE computes it (after an all-reduce every PE has the operands).
        work w;
        w.type = op.compute_type;
        w.cls = op.cost.cls;
        w.vector_ops = std::max(1.0, op.cost.flops);
        const std::uint32_t done = f.compute_on(prog, opi, all, prog.add_work(w), base);
        record("local vector work", first);
        return done;
    }
};

}  // namespace

mapping wafer_stencil_mapper::map(const workload_graph& g, const platform& plat) const {
    const std::string who = "wafer_stencil mapper";
    const wafer::fabric f = wafer::fabric::find(plat, m_opt.common, who);
    const stencil_grid sg = find_grid(g, f, who);
    const std::int64_t nx = sg.nx, ny = sg.ny, nz = sg.nz, bx = sg.bx, by = sg.by;
    const int gx = sg.gx, gy = sg.gy;
    const bool diagonals = m_opt.matrix == "diagonals";

    // SRAM: the grid vectors alive at once and the stored diagonals.
    const auto order = g.topological_order();
    const int peak = peak_vectors(g, sg.shape, order);
    const double vectors = static_cast<double>(peak) + (diagonals ? 7.0 : 0.0);
    const double per_pe = vectors * sg.points * sg.eb;
    if (per_pe > f.usable)
        throw input_error(who + ": the " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                          " grid needs " + format_number(vectors, 3) + " vectors of " + format_number(sg.points, 6) +
                          " points (" +
                          std::string(diagonals ? "solver vectors and 7 stored diagonals" : "solver vectors") +
                          ") = " + format_bytes(per_pe) + " per PE; a PE has " + format_bytes(f.usable) +
                          " for data (" + format_bytes(per_pe - f.usable) +
                          " short): use a smaller nz, mapper.matrix=constant, or a "
                          "larger wafer");
    mapping out;
    program& prog = out.prog;
    prog.name = g.name;
    const grid_rect used{0, 0, gx, gy};
    toolkit::sram_ledger(*f.pe_array, prog).place(used, per_pe, "the grid's vectors");
    const wafer::span all = wafer::add_span(prog, used);
    auto planned = std::make_shared<wafer_stencil_record>();
    out.record = planned;
    const int chunks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(m_opt.common.chunks, nz)));
    const int seg = static_cast<int>(m_opt.segment);
    const dtype dot_type = m_opt.dot_precision == "fp32" ? dtype::fp32 : sg.type;
    stencil_emitter em{g, f, sg, prog, *planned, all, chunks, seg, diagonals, dot_type, {}};
    em.ready.assign(g.tensors().size(), ~0u);
    em.emit(order);
    const auto it = g.parameters.find("iterations");
    planned->iterations = it != g.parameters.end() ? std::max<std::int64_t>(1, std::atoll(it->second.c_str())) : 1;
    out.samples = 1;
    out.details["mapper"] = "wafer_stencil";
    out.details["mode"] = "stencil";
    out.details["grid"] = {nx, ny, nz};
    out.details["pes_used"] = {gx, gy};
    out.details["columns_per_pe"] = bx * by;
    out.details["vectors_per_pe"] = vectors;
    out.details["bytes_per_pe"] = per_pe;
    out.details["capacity_bytes"] = f.pe_array->capacity_bytes();
    out.details["halo_chunks"] = chunks;
    out.details["segment_hops"] = seg;
    out.regions.emplace_back(f.pe_group,
                             floorplan_region{"grid " + std::to_string(nx) + "x" + std::to_string(ny), 0, 0, gx, gy});
    out.notes.push_back(
        "stencil: the " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " grid on " +
        std::to_string(gx) + " x " + std::to_string(gy) + " PEs, " +
        (bx * by == 1 ? std::string("one column") : std::to_string(bx) + " x " + std::to_string(by) + " columns") +
        " of " + std::to_string(nz) + " points per PE; " + format_number(vectors, 3) + " vectors (" +
        std::to_string(peak) + " solver vectors" + (diagonals ? " + 7 diagonals" : "") + ") = " + format_bytes(per_pe) +
        " of " + format_bytes(static_cast<double>(f.pe_array->capacity_bytes())) + " per PE");
    out.notes.push_back("halo exchange in " + std::to_string(chunks) + " z pieces over " + std::to_string(seg) +
                        "-hop segments; dot products all-reduce through the middle row and column" +
                        (dot_type != sg.type ? std::string(" and accumulate in fp32") : std::string()));
    return out;
}

TESSEL_REGISTER_MAPPER(make_mapper<wafer_stencil_mapper>(
    "wafer_stencil",
    "3D stencils and BiCGStab on a wafer-scale engine: one column of grid points per PE, halo exchange with "
    "the 4 neighbours, all-reduce for dot products (Rocki et al., SC20)"));

}  // namespace tessel
