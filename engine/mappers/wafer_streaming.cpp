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

/// Checks that there is a MemoryX to stream from and that the weights and state fit in it; returns their bytes.
double streamed_weight_bytes(const workload_graph& g, const fabric& f, const analysis& an, const std::string& who) {
    if (!f.mx)
        throw input_error(
            who + " needs a wafer_memoryx on platform '" + f.plat->title() +
            "' to stream the weights from (add one on the wafer's edge, or use mapper.impl=wafer_pipeline)");
    double streamed_total = 0;
    for (const auto& op : an.ops) streamed_total += op.weight_bytes + op.resident_bytes;
    if (streamed_total > static_cast<double>(f.mx->capacity_bytes()))
        throw input_error(who + ": the weights and state of '" + g.name + "' (" + format_bytes(streamed_total) +
                          ") exceed MemoryX's " + format_bytes(static_cast<double>(f.mx->capacity_bytes())));
    return streamed_total;
}

/// Rows the activations are spread over (one column per row while they last): the rows of the products
/// with weights, which are the batch's tokens or pixels.
std::int64_t streaming_activation_rows(const analysis& an) {
    std::int64_t rows = 1;
    for (const auto& op : an.ops)
        if (op.style == op_style::gemm && op.weight_bytes > 0) rows = std::max(rows, op.M);
    if (rows == 1)
        for (const auto& op : an.ops) rows = std::max(rows, op.out_rows);
    return rows;
}

/// The most activation bytes alive at once, the op where they peak, and the graph inputs' bytes.
struct streaming_activation_peak {
    double bytes = 0;
    size_t at = 0;
    double inputs_bytes = 0;  // graph-input bytes the ops read, in all
};

/// Peak of the activations alive at once: an op's output lives from the op to its last consumer; graph
/// inputs from the start to theirs.
streaming_activation_peak find_streaming_activation_peak(const analysis& an) {
    const size_t n = an.ops.size();
    std::vector<size_t> last_use(n, 0);
    streaming_activation_peak pk;
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
        pk.inputs_bytes += input_bytes_at[i];
        diff[0] += input_bytes_at[i];
        diff[i + 1] -= input_bytes_at[i];
    }
    double live = 0;
    for (size_t i = 0; i < n; ++i) {
        live += diff[i];
        if (live > pk.bytes) {
            pk.bytes = live;
            pk.at = i;
        }
    }
    return pk;
}

/// How the batch is cut so that the live activations fit: micro-batches, columns used, activation bytes per PE.
struct streaming_microbatching {
    std::int64_t mb = 1;
    int cols = 1;
    double per_pe = 0;
};

/// Micro-batches: the fewest for which the live activations fit.
streaming_microbatching choose_streaming_microbatches(const workload_graph& g, const fabric& f, const analysis& an,
                                                      const streaming_activation_peak& peak, std::int64_t rows,
                                                      int lines_max, int len_max, std::int64_t max_microbatches,
                                                      const std::string& who) {
    streaming_microbatching c;
    for (;; ++c.mb) {
        const std::int64_t mrows = (rows + c.mb - 1) / c.mb;
        c.cols = static_cast<int>(std::min<std::int64_t>(len_max, mrows));
        c.per_pe = peak.bytes / static_cast<double>(c.mb) / (static_cast<double>(lines_max) * c.cols);
        if (c.per_pe <= f.usable) return c;
        if (mrows <= len_max || c.mb >= max_microbatches) {
            // At one row per column the wafer is full. Short of that, the cap on micro-batches stands in the way
            // only if more micro-batches, up to one row per column, would fit: then it is this mapper's limit (a
            // system's plan search tries a smaller parallel.microbatch), not the wafer's.
            std::int64_t fits = 0;  // the fewest micro-batches that would fit; 0: none
            for (std::int64_t mb = c.mb + 1; mrows > len_max && fits == 0; ++mb) {
                const std::int64_t r = (rows + mb - 1) / mb;
                const double per_pe =
                    peak.bytes / static_cast<double>(mb) /
                    (static_cast<double>(lines_max) * static_cast<double>(std::min<std::int64_t>(len_max, r)));
                if (per_pe <= f.usable) fits = mb;
                if (r <= len_max) break;
            }
            const bool full = fits == 0;
            const std::string where =
                mrows <= len_max
                    ? "even one row per column of PEs"
                    : "with mapper.max_microbatches = " + std::to_string(max_microbatches) + " micro-batches";
            std::string why = who + ": '" + g.name + "' does not fit: its activations need " +
                              format_bytes(peak.bytes) + " at their peak (at op '" + an.ops[peak.at].name + "'), " +
                              format_bytes(c.per_pe) + " per PE over " + std::to_string(lines_max) + " x " +
                              std::to_string(c.cols) + " PEs " + where + "; a PE has " + format_bytes(f.usable) +
                              " for data (" + format_bytes(c.per_pe - f.usable) + " short)";
            if (!full)
                why += "; " + std::to_string(fits) +
                       " micro-batches would fit, a limit of tessel's mapper (raise the chip's "
                       "mapper.max_microbatches, or give the pass fewer sequences)";
            throw input_error(why);
        }
    }
}

/// What emitting the ops shares across ops and micro-batches: the plan's inputs, the program and its record,
/// each line's weight stream, and what the details sum up.
struct streaming_emit_state {
    streaming_emit_state(const workload_graph& g_, const fabric& f_, const analysis& an_, const common_options& o_,
                         program& prog_, plan_report& rep_, std::int64_t mb_, int lines_max_, int cols_)
        : g(g_),
          f(f_),
          an(an_),
          o(o_),
          prog(prog_),
          rep(rep_),
          mb(mb_),
          lines_max(lines_max_),
          cols(cols_),
          streams(static_cast<size_t>(lines_max_)) {}

    const workload_graph& g;
    const fabric& f;
    const analysis& an;
    const common_options& o;
    program& prog;
    plan_report& rep;
    std::int64_t mb;
    int lines_max, cols;
    std::vector<line_stream> streams;  // one per line
    // The line spans of an L x S rectangle at the edge, added once and shared by every op of that shape.
    std::map<std::pair<int, int>, std::vector<span>> lines_of;
    nlohmann::json ops = nlohmann::json::array();  // each op's details (from the first micro-batch)
    double io_bytes = 0;                           // streamed in from MemoryX, every micro-batch

    endpoint mx_for_line(int l) const { return f.mx_port(f.mx_port_of_cross[static_cast<size_t>(l)]); }
};

/// One op in one micro-batch: its rectangle of L lines x S columns at the edge, and what streams along the lines.
struct streaming_op_shape {
    bool gemm = false;
    bool weight_gemm = false;
    double share = 1;  // the micro-batch's share of the op
    std::int64_t op_rows = 1;
    int L = 1, S = 1;
    rect r;
    double P = 1;  // PEs
    int chunks = 1;
    double from_mx = 0;    // bytes streaming along every line
    double gathered = 0;   // an activation product's stationary operand, gathered along the lines
    double out_chunk = 0;  // output bytes per chunk
};

/// Where op `op` runs in a micro-batch and what it streams: its rectangle fits its features across the lines and
/// its rows along them, within the resident activations' columns.
streaming_op_shape shape_streaming_op(const streaming_emit_state& st, const op_info& op) {
    const std::int64_t mb = st.mb;
    streaming_op_shape sh;
    sh.gemm = op.style == op_style::gemm;
    sh.weight_gemm = sh.gemm && op.stat_flows.empty();
    sh.share = 1.0 / static_cast<double>(mb);
    sh.op_rows = std::max<std::int64_t>(1, (op.M + mb - 1) / mb);
    const int lines_max = st.lines_max;
    sh.L = static_cast<int>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(lines_max, sh.gemm ? op.row_cap : (op.stats_reduce ? op.row_cap : lines_max))));
    sh.S = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(st.cols, sh.op_rows)));
    sh.r = st.f.from_stream(0, sh.L, 0, sh.S);
    sh.P = static_cast<double>(sh.L) * sh.S;
    // Bytes that stream along every line: a weight GEMM's weights (and state) from MemoryX, chunk by
    // chunk; an activation product's stationary operand gathered along the lines (state from MemoryX);
    // other ops' parameters (an embedding only the rows it looks up).
    const double share = sh.share;
    sh.chunks = sh.weight_gemm ? static_cast<int>(std::max<std::int64_t>(1, st.o.chunks)) : 1;
    sh.from_mx = sh.weight_gemm ? op.weight_bytes + op.resident_bytes
                 : sh.gemm      ? op.resident_bytes * share + op.weight_bytes
                 : op.table     ? std::min(op.weight_bytes, op.out_bytes * share)
                                : op.weight_bytes + op.resident_bytes * share;
    sh.gathered = sh.gemm && !sh.weight_gemm ? op.stat_act_bytes * share : 0.0;
    sh.out_chunk = op.out_bytes * share / sh.chunks;
    return sh;
}

/// The spans of the lines of an op's rectangle, added to the program the first time its shape is used.
const std::vector<span>& streaming_line_spans(streaming_emit_state& st, const streaming_op_shape& sh) {
    std::vector<span>& lines = st.lines_of[{sh.L, sh.S}];
    if (lines.empty())
        for (int l = 0; l < sh.L; ++l) lines.push_back(add_span(st.prog, st.f.line_span(sh.r, l, sh.S)));
    return lines;
}

/// What an op waits for in one micro-batch: its producers' ends (every line), and per line its graph inputs.
struct streaming_op_deps {
    std::vector<std::uint32_t> base;
    std::vector<std::vector<std::uint32_t>> line_deps;
};

/// What this op waits for: its producers in this micro-batch, and graph inputs streamed in.
streaming_op_deps collect_streaming_op_deps(streaming_emit_state& st, const op_info& op, const streaming_op_shape& sh,
                                            std::uint32_t opi, const std::vector<std::uint32_t>& done) {
    const int L = sh.L;
    streaming_op_deps d;
    d.line_deps.resize(static_cast<size_t>(L));
    auto source_deps = [&](const source& s) {
        if (s.producer >= 0) {
            d.base.push_back(done[static_cast<size_t>(s.producer)]);
        } else {
            for (int l = 0; l < L; ++l)
                to_line(st.prog, st.f, opi, st.mx_for_line(l), sh.r, l, sh.S, s.bytes * sh.share / L, {},
                        d.line_deps[static_cast<size_t>(l)]);
            st.io_bytes += s.bytes * sh.share;
        }
    };
    for (const auto& s : op.streamed) source_deps(s);
    for (const auto& s : op.stat_flows) source_deps(s);
    std::sort(d.base.begin(), d.base.end());
    d.base.erase(std::unique(d.base.begin(), d.base.end()), d.base.end());
    return d;
}

/// One PE's work for one chunk of the op.
work streaming_op_work(const workload_graph& g, const op_info& op, const streaming_op_shape& sh) {
    const double share = sh.share, P = sh.P;
    const int chunks = sh.chunks, L = sh.L, S = sh.S;
    work w;
    w.type = op.type;
    w.cls = g.op(op.op).cost.cls;
    w.macs = op.macs * share / chunks / P;
    w.vector_ops = op.vec * share / chunks / P;
    if (sh.gemm) {
        w.bytes_in = (sh.from_mx + sh.gathered) / chunks / L + (L > 1 ? sh.out_chunk / S : 0.0);
        w.bytes_weight = 2 * w.macs * op.eb;
        w.bytes_out = w.macs * op.eb;
    } else {
        w.bytes_in = sh.from_mx / L;
        w.bytes_weight = op.in_bytes() * share / P;
        w.bytes_out = op.out_bytes * share / P;
    }
    return w;
}

/// Emits chunk `j` of an op: on every line its piece of the weights and the stationary operand coming in, and
/// the compute on it; then partial sums across the lines. `last` holds each line's previous compute. Returns the
/// step that ends the chunk.
std::uint32_t emit_streaming_chunk(streaming_emit_state& st, const op_info& op, const streaming_op_shape& sh,
                                   const streaming_op_deps& od, const std::vector<span>& lines, std::uint32_t opi,
                                   std::uint32_t wi, int j, std::vector<std::uint32_t>& last, op_record& rec) {
    program& prog = st.prog;
    const fabric& f = st.f;
    const int L = sh.L, S = sh.S, chunks = sh.chunks;
    const rect& r = sh.r;
    std::vector<std::uint32_t> comps(static_cast<size_t>(L));
    for (int l = 0; l < L; ++l) {
        std::vector<std::uint32_t> deps = od.base;
        if (j == 0)
            deps.insert(deps.end(), od.line_deps[static_cast<size_t>(l)].begin(),
                        od.line_deps[static_cast<size_t>(l)].end());
        if (last[static_cast<size_t>(l)] != ~0u) deps.push_back(last[static_cast<size_t>(l)]);
        if (sh.from_mx > 0) {
            // The line's weight stream, double buffered: this piece may come in once the piece two
            // before it on this line has been used.
            line_stream& ls = st.streams[static_cast<size_t>(l)];
            std::vector<std::uint32_t> wdeps;
            if (ls.used_by.size() >= 2) wdeps.push_back(ls.used_by[ls.used_by.size() - 2]);
            std::vector<std::uint32_t> got;
            to_line(prog, f, opi, st.mx_for_line(l), r, l, S, sh.from_mx / chunks / L, wdeps, got);
            deps.insert(deps.end(), got.begin(), got.end());
        }
        if (sh.gathered > 0) {
            std::vector<std::uint32_t> got;
            if (S > 1)
                got.push_back(
                    prog.add_transfer(opi, f.at(r, l, 0), f.at(r, l, S - 1), whole_bytes(sh.gathered / L), od.base));
            deps.insert(deps.end(), got.begin(), got.end());
        }
        comps[static_cast<size_t>(l)] = last[static_cast<size_t>(l)] =
            f.compute_on(prog, opi, lines[static_cast<size_t>(l)], wi, deps);
        if (sh.from_mx > 0) st.streams[static_cast<size_t>(l)].used_by.push_back(comps[static_cast<size_t>(l)]);
    }
    if (j == 0) rec.start_steps = comps;
    std::vector<std::uint32_t> ends;
    if (L > 1 && (sh.gemm || op.stats_reduce)) {
        // Partial sums (statistics) down each column, and the result scattered (broadcast) back up.
        const double bytes = sh.gemm ? sh.out_chunk / S : 8.0 * static_cast<double>(sh.op_rows) / S;
        const std::uint32_t join = prog.add_delay(opi, 0, comps);
        for (int q = 0; q < S; ++q) {
            const std::uint32_t down =
                prog.add_transfer(opi, f.at(r, L - 1, q), f.at(r, 0, q), whole_bytes(bytes), {join});
            ends.push_back(prog.add_transfer(opi, f.at(r, 0, q), f.at(r, L - 1, q), whole_bytes(bytes), {down}));
        }
    } else {
        ends = comps;
    }
    return prog.add_delay(opi, 0, ends);
}

/// Records an op as planned (from the first micro-batch): its steps for explain, its expected limit, its details.
void record_streaming_op(streaming_emit_state& st, const op_info& op, const streaming_op_shape& sh, const work& w,
                         const std::vector<std::uint32_t>& chunk_done, op_record& rec) {
    rec.chunk_done = chunk_done;
    rec.planned_cycles = st.f.pe_model->cycles(w);
    const double t_mx = sh.from_mx / sh.chunks / st.f.mx->peak_bytes_per_second() * st.rep.clk.hz;
    rec.limit = sh.from_mx > 0 && t_mx > rec.planned_cycles ? "MemoryX bandwidth" : "PE work";
    rec.planned_cycles = std::max(rec.planned_cycles, sh.from_mx > 0 ? t_mx : 0.0);
    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op.kind;
    d["lines"] = sh.L;
    d["columns"] = sh.S;
    d["pes"] = static_cast<std::int64_t>(sh.P);
    d["chunks"] = sh.chunks;
    d["streamed_bytes"] = sh.from_mx;
    d["planned_cycles_per_chunk"] = rec.planned_cycles;
    d["planned_limit"] = rec.limit;
    st.ops.push_back(d);
    st.rep.ops.push_back(std::move(rec));
}

/// Emits op `i` of micro-batch `b` (its chunks, and its output's store when it is a graph output) and sets
/// `done[i]` to the step that ends it.
void emit_streaming_op(streaming_emit_state& st, std::vector<std::uint32_t>& done, size_t i, std::int64_t b) {
    const op_info& op = st.an.ops[i];
    program& prog = st.prog;
    const streaming_op_shape sh = shape_streaming_op(st, op);
    const std::vector<span>& lines = streaming_line_spans(st, sh);
    const std::uint32_t opi = prog.intern_op(op.name);
    const streaming_op_deps od = collect_streaming_op_deps(st, op, sh, opi, done);
    const work w = streaming_op_work(st.g, op, sh);
    const std::uint32_t wi = prog.add_work(w);
    op_record rec;
    rec.name = op.name;
    rec.kind = op.kind;
    rec.chunks = sh.chunks;
    rec.pes = static_cast<std::int64_t>(sh.P);
    std::vector<std::uint32_t> last(static_cast<size_t>(sh.L), ~0u), chunk_done;
    for (int j = 0; j < sh.chunks; ++j)
        chunk_done.push_back(emit_streaming_chunk(st, op, sh, od, lines, opi, wi, j, last, rec));
    done[i] = chunk_done.size() == 1 ? chunk_done.front() : prog.add_delay(opi, 0, chunk_done);
    st.io_bytes += sh.from_mx;
    if (op.graph_output) {
        std::vector<std::uint32_t> stores;
        for (int l = 0; l < sh.L; ++l)
            stores.push_back(prog.add_transfer(opi, st.f.at(sh.r, l, 0), st.mx_for_line(l),
                                               whole_bytes(op.out_bytes * sh.share / sh.L), {done[i]}));
        done[i] = prog.add_delay(opi, 0, stores);
    }
    if (b == 0) record_streaming_op(st, op, sh, w, chunk_done, rec);
}

/// The mapping's details, floorplan region and notes.
void describe_streaming_plan(mapping& out, const streaming_emit_state& st, const streaming_activation_peak& peak,
                             const streaming_microbatching& c, double per_batch, std::uint64_t sram_used_max) {
    const fabric& f = st.f;
    const int lines_max = st.lines_max;
    const analysis& an = st.an;
    const std::int64_t mb = c.mb;
    const int cols = c.cols;
    out.samples = an.samples;
    out.details["mapper"] = "wafer_streaming";
    out.details["mode"] = "weight streaming";
    out.details["microbatches"] = mb;
    out.details["lines"] = lines_max;
    out.details["columns"] = cols;
    out.details["peak_activation_bytes"] = peak.bytes;
    out.details["activation_bytes_per_pe"] = c.per_pe;
    out.details["streamed_bytes"] = st.io_bytes;
    out.details["sram_used_max"] = sram_used_max;
    out.details["ops"] = st.ops;
    out.regions.emplace_back(f.pe_group,
                             floorplan_region{"weight streaming: every op", 0, 0, f.stream_x ? cols : lines_max,
                                              f.stream_x ? lines_max : cols});
    out.notes.push_back("weight streaming: " + std::to_string(an.ops.size()) + " ops one after another on " +
                        std::to_string(lines_max) + " lines x " + std::to_string(cols) +
                        " PEs at the wafer's edge, activations resident (peak " + format_bytes(peak.bytes) + ", " +
                        format_bytes(c.per_pe) + " per PE at op '" + an.ops[peak.at].name + "')");
    // What crosses the I/O per pass: every weight a product uses, only the looked-up rows of a table.
    const double io_bytes = st.io_bytes;
    const double per_pass = io_bytes / static_cast<double>(mb);
    out.notes.push_back("weights and state " + format_bytes(per_batch) + " in MemoryX; " + format_bytes(per_pass) +
                        " of them and the inputs stream in per pass (embedding tables: only the rows looked up) at " +
                        format_rate(f.mx->peak_bytes_per_second(), "B/s") + " (" +
                        format_time(per_pass / f.mx->peak_bytes_per_second()) + " per pass at the least)" +
                        (mb > 1 ? ", " + std::to_string(mb) +
                                      " micro-batches because the activations do not fit at once: " +
                                      format_bytes(io_bytes) + " streamed in all"
                                : std::string()));
    if (peak.inputs_bytes > 0)
        out.notes.push_back("graph inputs (" + format_bytes(peak.inputs_bytes) +
                            ") stream in from MemoryX, outputs back to it");
    for (const auto& note : an.notes) out.notes.push_back(note);
}

}  // namespace

mapping plan_streaming(const workload_graph& g, const fabric& f, const analysis& an, const common_options& o,
                       std::int64_t max_microbatches) {
    const std::string who = "weight streaming";
    const double streamed_total = streamed_weight_bytes(g, f, an, who);
    const int lines_max = f.stream_x ? f.H : f.W, len_max = f.stream_x ? f.W : f.H;
    const std::int64_t rows = streaming_activation_rows(an);
    const streaming_activation_peak peak = find_streaming_activation_peak(an);
    const streaming_microbatching c =
        choose_streaming_microbatches(g, f, an, peak, rows, lines_max, len_max, max_microbatches, who);
    mapping out;
    program& prog = out.prog;
    prog.name = g.name;
    toolkit::sram_ledger sram(*f.pe_array, prog);
    sram.place(f.used_span(f.from_stream(0, lines_max, 0, c.cols), lines_max, c.cols), c.per_pe,
               "the resident activations (peak at op '" + an.ops[peak.at].name + "')");
    auto planned = std::make_shared<plan_report>();
    out.record = planned;
    plan_report& rep = *planned;
    rep.mode = "weight streaming";
    rep.samples = an.samples;
    rep.clk = f.pe_model->clock();
    streaming_emit_state st(g, f, an, o, prog, rep, c.mb, lines_max, c.cols);
    for (std::int64_t b = 0; b < c.mb; ++b) {
        std::vector<std::uint32_t> done(an.ops.size(), ~0u);
        for (size_t i = 0; i < an.ops.size(); ++i) emit_streaming_op(st, done, i, b);
    }
    describe_streaming_plan(out, st, peak, c, streamed_total, sram.max_used_bytes());
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
