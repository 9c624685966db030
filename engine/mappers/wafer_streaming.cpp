#include "engine/mappers/wafer_streaming.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/mappers/toolkit/sram_ledger.h"

namespace tessel {

void wafer_streaming_mapper::options::declare(param_decl& d) {
    common.declare(d);
    d(max_microbatches, "max_microbatches", "64",
      "most micro-batches the activations may be cut into when they do not fit at once (each streams all weights "
      "again)",
      bound::positive);
}

namespace wafer {

namespace {

/// Streams of one line: the weight transfers in order, and the compute that used each, for double buffering.
struct line_stream {
    std::vector<std::uint32_t> used_by;  // compute step that consumed each weight transfer, in stream order
};

}  // namespace

mapping plan_streaming(const workload_graph& g, const fabric& f, const analysis& an, const common_options& o,
                       std::int64_t max_microbatches) {
    const std::string who = "weight streaming";
    if (!f.mx)
        throw input_error(
            who + " needs a wafer_memoryx on platform '" + f.plat->title() +
            "' to stream the weights from (add one on the wafer's edge, or use mapper.impl=wafer_pipeline)");
    const size_t n = an.ops.size();
    double streamed_total = 0;
    for (const auto& op : an.ops) streamed_total += op.weight_bytes + op.resident_bytes;
    if (streamed_total > static_cast<double>(f.mx->capacity_bytes()))
        throw input_error(who + ": the weights and state of '" + g.name + "' (" + format_bytes(streamed_total) +
                          ") exceed MemoryX's " + format_bytes(static_cast<double>(f.mx->capacity_bytes())));
    const int lines_max = f.stream_x ? f.H : f.W, len_max = f.stream_x ? f.W : f.H;

    // Rows the activations are spread over (one column per row while they last): the rows of the products
    // with weights, which are the batch's tokens or pixels.
    std::int64_t rows = 1;
    for (const auto& op : an.ops)
        if (op.style == op_style::gemm && op.weight_bytes > 0) rows = std::max(rows, op.M);
    if (rows == 1)
        for (const auto& op : an.ops) rows = std::max(rows, op.out_rows);

    // Peak of the activations alive at once: an op's output lives from the op to its last consumer; graph
    // inputs from the start to theirs.
    std::vector<size_t> last_use(n, 0);
    double inputs_bytes = 0;
    std::vector<double> input_bytes_at(n, 0);  // graph-input bytes each op reads
    for (size_t i = 0; i < n; ++i) {
        auto note = [&](const source& s) {
            if (s.producer >= 0)
                last_use[static_cast<size_t>(s.producer)] = std::max(last_use[static_cast<size_t>(s.producer)], i);
            else
                input_bytes_at[i] += s.bytes;
        };
        for (const auto& s : an.ops[i].streamed) note(s);
        for (const auto& s : an.ops[i].stat_flows) note(s);
        if (an.ops[i].graph_output) last_use[i] = n;
    }
    std::vector<double> diff(n + 2, 0);
    for (size_t i = 0; i < n; ++i) {
        diff[i] += an.ops[i].out_bytes;
        diff[std::max(i, last_use[i]) + 1] -= an.ops[i].out_bytes;
        inputs_bytes += input_bytes_at[i];
        diff[0] += input_bytes_at[i];
        diff[i + 1] -= input_bytes_at[i];
    }
    double live = 0, peak = 0;
    size_t peak_at = 0;
    for (size_t i = 0; i < n; ++i) {
        live += diff[i];
        if (live > peak) {
            peak = live;
            peak_at = i;
        }
    }

    // Micro-batches: the fewest for which the live activations fit.
    std::int64_t mb = 1;
    int cols = 1;
    double per_pe = 0;
    for (;; ++mb) {
        const std::int64_t mrows = (rows + mb - 1) / mb;
        cols = static_cast<int>(std::min<std::int64_t>(len_max, mrows));
        per_pe = peak / static_cast<double>(mb) / (static_cast<double>(lines_max) * cols);
        if (per_pe <= f.usable) break;
        if (mrows <= len_max || mb >= max_microbatches) {
            const std::string where =
                mrows <= len_max
                    ? "even one row per column of PEs"
                    : "with mapper.max_microbatches = " + std::to_string(max_microbatches) + " micro-batches";
            throw input_error(who + ": the activations of '" + g.name + "' need " + format_bytes(peak) +
                              " at their peak (at op '" + an.ops[peak_at].name + "'), " + format_bytes(per_pe) +
                              " per PE over " + std::to_string(lines_max) + " x " + std::to_string(cols) + " PEs " +
                              where + "; a PE has " + format_bytes(f.usable) + " for data (" +
                              format_bytes(per_pe - f.usable) + " short)");
        }
    }
    mapping out;
    program& prog = out.prog;
    prog.name = g.name;
    toolkit::sram_ledger sram(*f.pe_array, prog);
    sram.place(f.used_span(f.from_stream(0, lines_max, 0, cols), lines_max, cols), per_pe,
               "the resident activations (peak at op '" + an.ops[peak_at].name + "')");
    auto planned = std::make_shared<plan_report>();
    out.record = planned;
    plan_report& rep = *planned;
    rep.mode = "weight streaming";
    rep.samples = an.samples;
    rep.clk = f.pe_model->clock();
    std::vector<line_stream> streams(static_cast<size_t>(lines_max));
    // The line spans of an L x S rectangle at the edge, added once and shared by every op of that shape.
    std::map<std::pair<int, int>, std::vector<span>> lines_of;
    nlohmann::json ops = nlohmann::json::array();
    const auto mx_for_line = [&](int l) { return f.mx_port(f.mx_port_of_cross[static_cast<size_t>(l)]); };
    double io_bytes = 0;
    for (std::int64_t b = 0; b < mb; ++b) {
        std::vector<std::uint32_t> done(n, ~0u);
        for (size_t i = 0; i < n; ++i) {
            const op_info& op = an.ops[i];
            const bool gemm = op.style == op_style::gemm;
            const bool weight_gemm = gemm && op.stat_flows.empty();
            const double share = 1.0 / static_cast<double>(mb);
            const std::int64_t op_rows = std::max<std::int64_t>(1, (op.M + mb - 1) / mb);
            const int L = static_cast<int>(std::max<std::int64_t>(
                1, std::min<std::int64_t>(lines_max, gemm ? op.row_cap : (op.stats_reduce ? op.row_cap : lines_max))));
            const int S = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(cols, op_rows)));
            const rect r = f.from_stream(0, L, 0, S);
            std::vector<span>& lines = lines_of[{L, S}];
            if (lines.empty())
                for (int l = 0; l < L; ++l) lines.push_back(add_span(prog, f.line_span(r, l, S)));
            const std::uint32_t opi = prog.intern_op(op.name);
            const double P = static_cast<double>(L) * S;
            // What this op waits for: its producers in this micro-batch, and graph inputs streamed in.
            std::vector<std::uint32_t> base;
            std::vector<std::vector<std::uint32_t>> line_deps(static_cast<size_t>(L));
            auto source_deps = [&](const source& s) {
                if (s.producer >= 0) {
                    base.push_back(done[static_cast<size_t>(s.producer)]);
                } else {
                    for (int l = 0; l < L; ++l)
                        to_line(prog, f, opi, mx_for_line(l), r, l, S, s.bytes * share / L, {},
                                line_deps[static_cast<size_t>(l)]);
                    io_bytes += s.bytes * share;
                }
            };
            for (const auto& s : op.streamed) source_deps(s);
            for (const auto& s : op.stat_flows) source_deps(s);
            std::sort(base.begin(), base.end());
            base.erase(std::unique(base.begin(), base.end()), base.end());
            // Bytes that stream along every line: a weight GEMM's weights (and state) from MemoryX, chunk by
            // chunk; an activation product's stationary operand gathered along the lines (state from MemoryX);
            // other ops' parameters (an embedding only the rows it looks up).
            const int chunks = weight_gemm ? static_cast<int>(std::max<std::int64_t>(1, o.chunks)) : 1;
            const double from_mx = weight_gemm ? op.weight_bytes + op.resident_bytes
                                   : gemm      ? op.resident_bytes * share + op.weight_bytes
                                   : op.table  ? std::min(op.weight_bytes, op.out_bytes * share)
                                               : op.weight_bytes + op.resident_bytes * share;
            const double gathered = gemm && !weight_gemm ? op.stat_act_bytes * share : 0.0;
            work w;
            w.type = op.type;
            w.cls = g.op(op.op).cost.cls;
            w.macs = op.macs * share / chunks / P;
            w.vector_ops = op.vec * share / chunks / P;
            const double out_chunk = op.out_bytes * share / chunks;
            if (gemm) {
                w.bytes_in = (from_mx + gathered) / chunks / L + (L > 1 ? out_chunk / S : 0.0);
                w.bytes_weight = 2 * w.macs * op.eb;
                w.bytes_out = w.macs * op.eb;
            } else {
                w.bytes_in = from_mx / L;
                w.bytes_weight = op.in_bytes() * share / P;
                w.bytes_out = op.out_bytes * share / P;
            }
            const std::uint32_t wi = prog.add_work(w);
            op_record rec;
            rec.name = op.name;
            rec.kind = op.kind;
            rec.chunks = chunks;
            rec.pes = static_cast<std::int64_t>(P);
            std::vector<std::uint32_t> last(static_cast<size_t>(L), ~0u), chunk_done;
            for (int j = 0; j < chunks; ++j) {
                std::vector<std::uint32_t> comps(static_cast<size_t>(L));
                for (int l = 0; l < L; ++l) {
                    std::vector<std::uint32_t> deps = base;
                    if (j == 0)
                        deps.insert(deps.end(), line_deps[static_cast<size_t>(l)].begin(),
                                    line_deps[static_cast<size_t>(l)].end());
                    if (last[static_cast<size_t>(l)] != ~0u) deps.push_back(last[static_cast<size_t>(l)]);
                    if (from_mx > 0) {
                        // The line's weight stream, double buffered: this piece may come in once the piece two
                        // before it on this line has been used.
                        line_stream& ls = streams[static_cast<size_t>(l)];
                        std::vector<std::uint32_t> wdeps;
                        if (ls.used_by.size() >= 2) wdeps.push_back(ls.used_by[ls.used_by.size() - 2]);
                        std::vector<std::uint32_t> got;
                        to_line(prog, f, opi, mx_for_line(l), r, l, S, from_mx / chunks / L, wdeps, got);
                        deps.insert(deps.end(), got.begin(), got.end());
                    }
                    if (gathered > 0) {
                        std::vector<std::uint32_t> got;
                        if (S > 1)
                            got.push_back(prog.add_transfer(opi, f.at(r, l, 0), f.at(r, l, S - 1),
                                                            whole_bytes(gathered / L), base));
                        deps.insert(deps.end(), got.begin(), got.end());
                    }
                    comps[static_cast<size_t>(l)] = last[static_cast<size_t>(l)] =
                        f.compute_on(prog, opi, lines[static_cast<size_t>(l)], wi, deps);
                    if (from_mx > 0) streams[static_cast<size_t>(l)].used_by.push_back(comps[static_cast<size_t>(l)]);
                }
                if (j == 0) rec.start_steps = comps;
                std::vector<std::uint32_t> ends;
                if (L > 1 && (gemm || op.stats_reduce)) {
                    // Partial sums (statistics) down each column, and the result scattered (broadcast) back up.
                    const double bytes = gemm ? out_chunk / S : 8.0 * static_cast<double>(op_rows) / S;
                    const std::uint32_t join = prog.add_delay(opi, 0, comps);
                    for (int q = 0; q < S; ++q) {
                        const std::uint32_t down =
                            prog.add_transfer(opi, f.at(r, L - 1, q), f.at(r, 0, q), whole_bytes(bytes), {join});
                        ends.push_back(
                            prog.add_transfer(opi, f.at(r, 0, q), f.at(r, L - 1, q), whole_bytes(bytes), {down}));
                    }
                } else {
                    ends = comps;
                }
                chunk_done.push_back(prog.add_delay(opi, 0, ends));
            }
            done[i] = chunk_done.size() == 1 ? chunk_done.front() : prog.add_delay(opi, 0, chunk_done);
            io_bytes += from_mx;
            if (op.graph_output) {
                std::vector<std::uint32_t> stores;
                for (int l = 0; l < L; ++l)
                    stores.push_back(prog.add_transfer(opi, f.at(r, l, 0), mx_for_line(l),
                                                       whole_bytes(op.out_bytes * share / L), {done[i]}));
                done[i] = prog.add_delay(opi, 0, stores);
            }
            if (b == 0) {
                rec.chunk_done = chunk_done;
                rec.planned_cycles = f.pe_model->cycles(w);
                const double t_mx = from_mx / chunks / f.mx->peak_bytes_per_second() * rep.clk.hz;
                rec.limit = from_mx > 0 && t_mx > rec.planned_cycles ? "MemoryX bandwidth" : "PE work";
                rec.planned_cycles = std::max(rec.planned_cycles, from_mx > 0 ? t_mx : 0.0);
                nlohmann::json d;
                d["op"] = op.name;
                d["kind"] = op.kind;
                d["lines"] = L;
                d["columns"] = S;
                d["pes"] = static_cast<std::int64_t>(P);
                d["chunks"] = chunks;
                d["streamed_bytes"] = from_mx;
                d["planned_cycles_per_chunk"] = rec.planned_cycles;
                d["planned_limit"] = rec.limit;
                ops.push_back(d);
                rep.ops.push_back(std::move(rec));
            }
        }
    }
    const double per_batch = streamed_total;
    out.samples = an.samples;
    out.details["mapper"] = "wafer_streaming";
    out.details["mode"] = "weight streaming";
    out.details["microbatches"] = mb;
    out.details["lines"] = lines_max;
    out.details["columns"] = cols;
    out.details["peak_activation_bytes"] = peak;
    out.details["activation_bytes_per_pe"] = per_pe;
    out.details["streamed_bytes"] = io_bytes;
    out.details["sram_used_max"] = sram.max_used_bytes();
    out.details["ops"] = ops;
    out.regions.emplace_back(f.pe_group,
                             floorplan_region{"weight streaming: every op", 0, 0, f.stream_x ? cols : lines_max,
                                              f.stream_x ? lines_max : cols});
    out.notes.push_back("weight streaming: " + std::to_string(n) + " ops one after another on " +
                        std::to_string(lines_max) + " lines x " + std::to_string(cols) +
                        " PEs at the wafer's edge, activations resident (peak " + format_bytes(peak) + ", " +
                        format_bytes(per_pe) + " per PE at op '" + an.ops[peak_at].name + "')");
    // What crosses the I/O per pass: every weight a product uses, only the looked-up rows of a table.
    const double per_pass = io_bytes / static_cast<double>(mb);
    out.notes.push_back("weights and state " + format_bytes(per_batch) + " in MemoryX; " + format_bytes(per_pass) +
                        " of them and the inputs stream in per pass (embedding tables: only the rows looked up) at " +
                        format_rate(f.mx->peak_bytes_per_second(), "B/s") + " (" +
                        format_time(per_pass / f.mx->peak_bytes_per_second()) + " per pass at the least)" +
                        (mb > 1 ? ", " + std::to_string(mb) +
                                      " micro-batches because the activations do not fit at once: " +
                                      format_bytes(io_bytes) + " streamed in all"
                                : std::string()));
    if (inputs_bytes > 0)
        out.notes.push_back("graph inputs (" + format_bytes(inputs_bytes) +
                            ") stream in from MemoryX, outputs back to it");
    for (const auto& note : an.notes) out.notes.push_back(note);
    return out;
}

}  // namespace wafer

mapping wafer_streaming_mapper::map(const workload_graph& g, const platform& plat) const {
    const wafer::fabric f = wafer::fabric::find(plat, m_opt.common, "wafer_streaming mapper");
    const wafer::analysis an = wafer::analyse(g, *f.pe_model);
    return wafer::plan_streaming(g, f, an, m_opt.common, m_opt.max_microbatches);
}

TESSEL_REGISTER_MAPPER(make_mapper<wafer_streaming_mapper>(
    "wafer_streaming",
    "weight streaming on a wafer-scale engine: activations resident in the PEs, each op's weights "
    "streamed in from MemoryX line by line while the PEs compute"));

}  // namespace tessel
