#include "engine/mappers/wafer_common.h"

#include <cstdlib>

#include "engine/mappers/toolkit/parts.h"
#include "engine/mappers/toolkit/rows.h"
#include "engine/workload/op_types.h"
#include "models/core/grid_span.h"

#include <algorithm>
#include <cmath>

namespace tessel::wafer {

void common_options::declare(param_decl& d) {
    d(pes, "pes", "", "the wafer's PE array (default: the first array of PEs held as data: wafer_pe_array)");
    d(memory, "memory", "",
      "the MemoryX service on the wafer's edge (default: the first memory that does not compute: wafer_memoryx; "
      "without one, graph inputs start on the wafer and outputs stay there)");
    d(chunks, "chunks", "4",
      "pieces each op's work is cut into, so consecutive ops overlap (a chunk is 1/chunks of every tensor's rows, or "
      "of a streamed weight); more chunks: finer pipelining, more steps",
      bound::positive);
    d(reserved, "reserved", "4KiB",
      "SRAM per PE kept for code and runtime buffers, never given to data (an assumption: no published figure)");
}

double op_info::in_bytes() const {
    double b = 0;
    for (const auto& s : streamed) b += s.bytes;
    return b;
}

fabric fabric::find(const platform& plat, const common_options& o, const std::string& who) {
    fabric f;
    f.plat = &plat;
    const platform::group* g =
        &toolkit::find_part(plat, o.pes, {who, "pes", "a PE array held as data (wafer_pe_array)", toolkit::is_pe_grid});
    if (!g->shape.empty()) throw input_error(who + ": '" + g->name + "' (" + g->kind + ") is not a single PE array");
    f.pe_array = &toolkit::first(plat, *g);
    f.pes = f.pe_array->grid();
    f.pe_model = f.pe_array->unit_model();
    f.paths = f.pes->pe_paths();
    f.pe_group = g->name;
    f.W = f.pes->width();
    f.H = f.pes->height();
    const attach_point a0 = plat.attachment(f.pe_array->id(), 0);
    if (!a0.valid())
        throw input_error(who + ": the PE array '" + g->name +
                          "' is not connected to a fabric (pe[x,y] -> fabric[x,y])");
    f.noc = &plat.net(a0.net);
    if (f.noc->first_route_axis() < 0)
        throw input_error(
            who +
            ": the PE array must attach to a 2D mesh with dimension-order routing (a mesh_noc: the wafer's fabric)");
    const auto shape = f.noc->port_shape();
    if (shape.size() != 2 || shape[0] != f.W || shape[1] != f.H)
        throw input_error(who + ": the fabric '" + f.noc->path() + "' must have one router per PE (" +
                          std::to_string(f.W) + " x " + std::to_string(f.H) + ")");
    for (const auto& [x, y] :
         std::vector<std::pair<int, int>>{{0, 0}, {f.W - 1, 0}, {0, f.H - 1}, {f.W - 1, f.H - 1}}) {
        const attach_point a = plat.attachment(f.pe_array->id(), f.pes->unit_of(x, y));
        if (!a.valid() || a.net != a0.net || a.port != static_cast<std::uint32_t>(y * f.W + x))
            throw input_error(who + ": PE (" + std::to_string(x) + "," + std::to_string(y) +
                              ") must attach to its own router (" + std::to_string(x) + "," + std::to_string(y) +
                              ") of the fabric");
    }
    // The last leg of a route runs along x when routes cross y first (yx), along y when they cross x first (xy).
    f.stream_x = f.noc->first_route_axis() != 0;
    f.link_bpc = f.noc->link_bytes_per_second() / f.pe_model->clock().hz;
    f.usable = static_cast<double>(f.pe_array->capacity_bytes()) - static_cast<double>(o.reserved.bytes());
    if (f.usable <= 0)
        throw input_error(who + ": mapper.reserved (" + format_bytes(static_cast<double>(o.reserved.bytes())) +
                          ") leaves nothing of the PEs' " +
                          format_bytes(static_cast<double>(f.pe_array->capacity_bytes())) + " SRAM");
    // MemoryX, optional: a memory that does not compute, with its ports on the wafer's edge.
    const platform::group* mg = toolkit::find_optional_part(
        plat, o.memory, {who, "memory", "a memory service (wafer_memoryx)", toolkit::is_pure_memory});
    if (mg) {
        f.mx = &toolkit::first(plat, *mg);
        if (!mg->shape.empty()) throw input_error(who + ": '" + mg->name + "' is not a single memory service");
        const int ports = static_cast<int>(f.mx->unit_count());
        const int cross_extent = f.stream_x ? f.H : f.W;
        // Each port's place; per cross coordinate the port there nearest the lines' start, then the nearest
        // such port for every cross coordinate (ties to the lower one).
        std::vector<int> here(static_cast<size_t>(cross_extent), -1);
        f.mx_port_pos.assign(static_cast<size_t>(ports), 0);
        f.mx_port_cross.assign(static_cast<size_t>(ports), 0);
        for (int p = 0; p < ports; ++p) {
            const attach_point a = plat.attachment(f.mx->id(), p);
            if (!a.valid() || a.net != a0.net)
                throw input_error(who + ": MemoryX port " + std::to_string(p) + " of '" + mg->name +
                                  "' is not attached to the wafer's fabric (memoryx[p] -> fabric[x,y])");
            const auto unit = static_cast<std::int32_t>(a.port);
            f.mx_port_pos[static_cast<size_t>(p)] = f.pos_of(unit);
            f.mx_port_cross[static_cast<size_t>(p)] = f.cross_of(unit);
            int& h = here[static_cast<size_t>(f.cross_of(unit))];
            if (h < 0 || f.mx_port_pos[static_cast<size_t>(p)] < f.mx_port_pos[static_cast<size_t>(h)]) h = p;
        }
        std::vector<int> below(static_cast<size_t>(cross_extent), -1), above(static_cast<size_t>(cross_extent), -1);
        for (int c = 0, last = -1; c < cross_extent; ++c) {
            if (here[static_cast<size_t>(c)] >= 0) last = c;
            below[static_cast<size_t>(c)] = last;
        }
        for (int c = cross_extent - 1, next = -1; c >= 0; --c) {
            if (here[static_cast<size_t>(c)] >= 0) next = c;
            above[static_cast<size_t>(c)] = next;
        }
        f.mx_port_of_cross.assign(static_cast<size_t>(cross_extent), 0);
        for (int c = 0; c < cross_extent; ++c) {
            const int lo = below[static_cast<size_t>(c)], hi = above[static_cast<size_t>(c)];
            const int pick = lo < 0 ? hi : hi < 0 ? lo : (c - lo <= hi - c ? lo : hi);
            f.mx_port_of_cross[static_cast<size_t>(c)] = here[static_cast<size_t>(pick)];
        }
    }
    return f;
}

using toolkit::last_dim;
using toolkit::rows_of;

analysis analyse(const workload_graph& g, const compute_model& pe) {
    analysis a;
    const size_t nt = g.tensors().size();
    std::vector<std::vector<origin>> orig(nt);
    for (size_t t = 0; t < nt; ++t) {
        const tensor_info& ti = g.tensors()[t];
        origin o;
        o.fraction = 1;
        switch (ti.role) {
            case tensor_role::input:
                o.input = static_cast<int>(t);
                break;
            case tensor_role::weight:
                o.resident = o.weight = true;
                break;
            case tensor_role::state:
                o.resident = true;
                break;
            case tensor_role::constant:
                continue;
            default:
                continue;  // produced by an op
        }
        orig[t].push_back(o);
    }
    for (int o : g.topological_order()) {
        const op_node& op = g.op(o);
        if (is_view(op)) {
            double total = 0;
            for (int t : op.inputs)
                if (g.tensor(t).role != tensor_role::constant) total += static_cast<double>(g.tensor(t).bytes());
            for (int out : op.outputs) {
                auto& dst = orig[static_cast<size_t>(out)];
                dst.clear();
                for (int t : op.inputs) {
                    if (g.tensor(t).role == tensor_role::constant || total <= 0) continue;
                    const double share = static_cast<double>(g.tensor(t).bytes()) / total;
                    for (origin x : orig[static_cast<size_t>(t)]) {
                        x.fraction *= share;
                        dst.push_back(x);
                    }
                }
            }
            continue;
        }
        op_info info;
        info.op = o;
        info.name = op.name;
        info.kind = op_kind_name(op.kind);
        info.type = op.compute_type;
        info.eb = std::max(1, dtype_bits(op.compute_type)) / 8.0;
        info.macs = op.cost.macs;
        info.vec = std::max(0.0, op.cost.flops - 2 * op.cost.macs);
        const bool gemm = (op.kind == op_kind::matmul || op.kind == op_kind::conv2d || op.kind == op_kind::attention) &&
                          op.cost.macs > 0 && op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0;
        info.style = gemm ? op_style::gemm : op_style::vector;
        info.table = op.kind == op_kind::embedding || op.kind == op_kind::gather;
        info.stats_reduce = op.kind == op_kind::softmax || op.kind == op_kind::layernorm || op.kind == op_kind::reduce;
        for (size_t i = 0; i < op.inputs.size(); ++i) {
            const int t = op.inputs[i];
            const tensor_info& ti = g.tensor(t);
            if (ti.role == tensor_role::constant) continue;
            const double bytes = static_cast<double>(ti.bytes());
            // The operand a matrix product keeps in SRAM: B of a matmul, the filter of a convolution, the keys
            // and values of fused attention.
            const bool stationary = gemm && (op.kind == op_kind::attention ? (i == 1 || i == 2) : i == 1);
            for (const origin& x : orig[static_cast<size_t>(t)]) {
                const double b = bytes * x.fraction;
                if (x.resident) {
                    (x.weight ? info.weight_bytes : info.resident_bytes) += b;
                } else {
                    source s{x.producer, x.input, b};
                    if (stationary) {
                        info.stat_flows.push_back(s);
                        info.stat_act_bytes += b;
                    } else {
                        info.streamed.push_back(s);
                    }
                }
            }
        }
        const tensor_info& out0 = g.tensor(op.outputs.front());
        for (int t : op.outputs) {
            info.out_bytes += static_cast<double>(g.tensor(t).bytes());
            const tensor_info& ti = g.tensor(t);
            if (ti.role == tensor_role::output || ti.consumers.empty()) {
                info.graph_output = true;
                info.out_tensor = t;
            }
        }
        info.out_rows = rows_of(out0);
        info.features_out = static_cast<double>(last_dim(out0));
        if (gemm) {
            info.batch = std::max<std::int64_t>(1, op.cost.batch);
            info.M = op.cost.m * info.batch;
            info.N = op.cost.n;
            info.K = op.cost.k;
            info.row_cap = info.batch * info.K;
            info.col_cap = info.N;
            info.features_in = static_cast<double>(info.batch * info.K);
            info.features_out = static_cast<double>(info.N);
        } else {
            const std::int64_t elems = std::max<std::int64_t>(1, out0.elements());
            const tensor_info* in0 = nullptr;
            for (int t : op.inputs)
                if (g.tensor(t).role != tensor_role::constant && g.tensor(t).role != tensor_role::weight) {
                    in0 = &g.tensor(t);
                    break;
                }
            const std::int64_t feat = in0 ? last_dim(*in0) : last_dim(out0);
            info.features_in = static_cast<double>(feat);
            if (info.stats_reduce) {
                info.row_cap = feat;
                info.col_cap = in0 ? rows_of(*in0) : rows_of(out0);
            } else {
                info.row_cap = elems;
                info.col_cap = elems;
            }
            info.M = info.out_rows;
        }
        work w;
        w.macs = info.macs;
        w.vector_ops = info.vec;
        w.type = info.type;
        pe.check(w, "the wafer's PEs (op '" + op.name + "')");
        const int index = static_cast<int>(a.ops.size());
        a.ops.push_back(std::move(info));
        for (int t : op.outputs) {
            auto& dst = orig[static_cast<size_t>(t)];
            dst.clear();
            origin x;
            x.producer = index;
            x.fraction = static_cast<double>(g.tensor(t).bytes()) / std::max(1.0, a.ops.back().out_bytes);
            dst.push_back(x);
        }
    }
    if (a.ops.empty()) throw input_error("workload '" + g.name + "' has no op that computes or moves data");
    a.samples = toolkit::batch_samples(g);
    return a;
}

std::uint64_t whole_bytes(double bytes) {
    if (!(bytes > 0)) return 0;
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(bytes - 1e-9)));
}

std::vector<int> line_ends(const fabric& f, int src_pos, const rect& r, int len) {
    const int p0 = f.pos0(r), p1 = p0 + len - 1;
    if (len <= 1 || src_pos <= p0) return {len - 1};
    if (src_pos >= p1) return {0};
    return {0, len - 1};
}

void to_line(program& p, const fabric& f, std::uint32_t op, endpoint from, const rect& r, int l, int len, double bytes,
             const std::vector<std::uint32_t>& deps, std::vector<std::uint32_t>& out) {
    const std::uint64_t b = whole_bytes(bytes);
    if (b == 0) return;
    int src_pos;
    if (from.comp == f.pe_array->id())
        src_pos = f.pos_of(from.unit);
    else if (f.mx && from.comp == f.mx->id())
        src_pos = f.mx_port_pos[static_cast<size_t>(from.unit)];
    else
        throw std::logic_error("wafer: a flow from outside the wafer");
    for (int end : line_ends(f, src_pos, r, len)) out.push_back(p.add_transfer(op, from, f.at(r, l, end), b, deps));
}

std::string cycles_text(double cycles, const clock_domain& clk) { return format_time(cycles / clk.hz); }

span add_span(program& p, const rect& r) { return span{r, p.add_payload(std::make_shared<grid_span>(r))}; }

std::uint32_t fabric::compute_on(program& p, std::uint32_t op, const span& s, std::uint32_t work,
                                 const std::vector<std::uint32_t>& deps) const {
    const std::uint32_t step = p.add_compute(op, pe(s.r.x0, s.r.y0), work, deps);
    p.use_payload(step, s.payload);
    return step;
}

}  // namespace tessel::wafer
