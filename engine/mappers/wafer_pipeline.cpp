#include "engine/mappers/wafer_pipeline.h"

#include <algorithm>
#include <cmath>

#include "engine/mappers/toolkit/sram_ledger.h"
#include "engine/mappers/wafer_link_load.h"
#include "engine/mappers/wafer_pipeline_layout.h"
#include "engine/mappers/wafer_streaming.h"

namespace tessel {

void wafer_pipeline_mapper::options::declare(param_decl& d) {
    common.declare(d);
    d.choice(
        fallback, "fallback", "streaming", {"streaming", "none"},
        "when the weights do not fit in the wafer's SRAM: run weight streaming instead (with a note), or stop with an "
        "error that says by how much they do not fit");
    d(max_microbatches, "max_microbatches", "64",
      "for the weight-streaming fallback: most micro-batches the activations may be cut into", bound::positive);
    d(quantum, "quantum", "auto",
      "how far ahead of requests still queued a packet may take links (the run's quantum, docs/performance.md): auto = "
      "1% of the planned slowest interval between chunks, at most 64 cycles; 0 = exact arrival order (an event per "
      "hop: minutes for a whole-model training step); or a time (16cycles, 20ns)");
}

namespace wafer {
namespace {

/// The program's quantum in ticks: how far out of arrival order the run may serve the fabric's requests. Whole
/// models queue an event per hop in exact order (1.6 billion for a BERT-large training step); a quantum that is
/// a small share of the pipeline's interval between chunks changes what the plan is about by that share at most
/// (tests/wafer/quantum_test.cpp), and 64 cycles is 1/16 of a 4 KiB packet's time on a 32-bit link.
tick run_quantum(const std::string& text, double slowest_cycles, const clock_domain& clk) {
    if (text == "auto") return clk.cycles(std::min(64.0, std::floor(0.01 * slowest_cycles)));
    return time_or_cycles(parse_quantity(text), clk, "mapper.quantum", text,
                          "auto, 0 or a time such as 16cycles or 20ns");
}

struct port {
    endpoint pe;
    double f0, f1;  // the output features it holds
};

struct op_state {
    rect r;
    int L = 1, S = 1, chunks = 1;
    std::vector<port> ports;
    std::vector<std::vector<std::uint32_t>> ready;  // [chunk][port]
    std::vector<span> lines;                        // the span of each line's PEs
    std::vector<std::uint32_t> last;                // last compute step per line (~0u: none)
};

/// Calls fn(port, line, share) for every port of `src` and line of a reader with `L` lines that share features:
/// the port holds features [f0, f1) of the output, line l takes [l/L, (l+1)/L), `share` is their overlap.
template <class F>
void port_lines(const op_state& src, int L, F fn) {
    size_t q = 0;
    int l = 0;
    while (q < src.ports.size() && l < L) {
        const double l0 = static_cast<double>(l) / L, l1 = static_cast<double>(l + 1) / L;
        const port& pq = src.ports[q];
        const double fo = overlap(pq.f0, pq.f1, l0, l1);
        if (fo > 0) fn(q, l, fo);
        if (pq.f1 <= l1)
            ++q;
        else
            ++l;
    }
}

/// Transfers carrying rows [r0, r1) of a tensor made by `src` (`bytes` for all its rows) into the lines of `dst`:
/// each producer port sends the features it holds to the lines that take them.
void flow_from(program& p, const fabric& f, std::uint32_t opi, const op_state& src, double bytes, double r0, double r1,
               const op_state& dst, std::vector<std::vector<std::uint32_t>>& deps) {
    const int ci = src.chunks;
    for (int i = 0; i < ci; ++i) {
        const double ov = overlap(static_cast<double>(i) / ci, static_cast<double>(i + 1) / ci, r0, r1);
        if (ov <= 0) continue;
        port_lines(src, dst.L, [&](size_t q, int l, double fo) {
            to_line(p, f, opi, src.ports[q].pe, dst.r, l, dst.S, bytes * ov * fo,
                    {src.ready[static_cast<size_t>(i)][q]}, deps[static_cast<size_t>(l)]);
        });
    }
}

/// Why the model does not fit layer-pipelined, when `d` asks for more than the wafer's `total` PEs.
std::string misfit(const demand& d, const workload_graph& g, const platform& plat, const fabric& f,
                   std::int64_t total) {
    return "layer-pipelined, '" + g.name + "' does not fit on " + plat.title() + ": " +
           (!d.worst_op.empty()
                ? d.worst_op
                : "its weights and state (" + format_bytes(d.stationary) + ") and buffers need " +
                      std::to_string(d.need) + " PEs at " + format_bytes(f.usable) + " usable each, the wafer has " +
                      std::to_string(total) + " (" +
                      format_number(100.0 * static_cast<double>(d.need - total) / static_cast<double>(total), 3) +
                      "% short)");
}

/// Weight streaming in place of a pipeline that does not fit (`why`, which its notes lead with), or with
/// mapper.fallback=none an error saying `why`, then `advice`.
mapping fall_back(const std::string& why, const std::string& advice, const workload_graph& g, const fabric& f,
                  const analysis& an, const wafer_pipeline_mapper::options& opt) {
    if (opt.fallback == "none") throw input_error(why + advice);
    mapping m = plan_streaming(g, f, an, opt.common, opt.max_microbatches);
    m.notes.insert(m.notes.begin(), why + ": running weight streaming instead (mapper.fallback=streaming)");
    m.details["fallback"] = why;
    return m;
}

/// The program as the ops are emitted one by one, each op's entry in the details, and what the plan's schedule
/// (after them) needs of each op: its own cycles per chunk and what bounds them, its output stream, the routes
/// that feed its chunks, the fabric's load, and each chunk's planned completion.
struct pipeline {
    pipeline(const workload_graph& graph, const fabric& fab, const analysis& a, program& p)
        : g(graph), f(fab), an(a), prog(p), sram(*fab.pe_array, p), st(a.ops.size()) {
        const size_t n = an.ops.size();
        own.assign(n, 0.0);
        out_stream.assign(n, 0.0);
        link.assign(n, 0.0);
        own_limit.resize(n);
        inbound.resize(n);
        flows.resize(n);
        done_at.resize(n);
        sent_at.resize(n);
        readers.assign(n, 0);
        for (const op_info& o : an.ops) {
            for (const source& src : o.streamed)
                if (src.producer >= 0) ++readers[static_cast<size_t>(src.producer)];
            for (const source& src : o.stat_flows)
                if (src.producer >= 0) ++readers[static_cast<size_t>(src.producer)];
        }
    }
    const workload_graph& g;
    const fabric& f;
    const analysis& an;
    program& prog;
    toolkit::sram_ledger sram;
    std::vector<op_state> st;
    nlohmann::json ops = nlohmann::json::array();
    bool inputs_resident = false;
    std::vector<double> own, out_stream, link;
    std::vector<std::string> own_limit;
    std::vector<std::vector<route>> inbound;
    std::vector<std::vector<std::pair<route, double>>> flows;  // every flow it sends per chunk, bytes each
    std::vector<std::vector<double>> done_at, sent_at;
    std::vector<int> readers;  // ops reading each op's output (each gets its own copy of the stream)
};

/// One chunk's work on each PE of op `o` on L lines of S PEs, in c chunks.
work chunk_work(const op_info& o, const workload_graph& g, int L, int S, int c) {
    const double P = static_cast<double>(L) * S;
    work w;
    w.type = o.type;
    w.cls = g.op(o.op).cost.cls;
    w.macs = o.macs / c / P;
    w.vector_ops = o.vec / c / P;
    if (o.style == op_style::gemm) {
        w.bytes_in = o.in_bytes() / c / L + (L > 1 ? o.out_bytes / c / S : 0.0);
        w.bytes_weight = 2 * w.macs * o.eb;
        w.bytes_out = w.macs * o.eb;
    } else {
        w.bytes_in = o.in_bytes() / c / P;
        w.bytes_weight = o.table ? o.out_bytes / c / P : 0.0;
        w.bytes_out = o.out_bytes / c / P;
    }
    return w;
}

/// Output ports: a matrix product's outputs leave from the columns' ends at line 0; anything else's from
/// one PE of each line, staggered along the lines (every PE of a line holds part of its output) so the
/// first legs of the routes to the next rectangle run over different links instead of sharing one.
void add_ports(op_state& s, const fabric& f, bool by_column) {
    const int L = s.L, S = s.S;
    const int Q = by_column ? S : L;
    for (int q = 0; q < Q; ++q)
        s.ports.push_back(port{by_column
                                   ? f.at(s.r, 0, q)
                                   : f.at(s.r, q, S - 1 - static_cast<int>((static_cast<std::int64_t>(q) * S) / Q)),
                               static_cast<double>(q) / Q, static_cast<double>(q + 1) / Q});
    s.ready.assign(static_cast<size_t>(s.chunks), std::vector<std::uint32_t>(static_cast<size_t>(Q), 0));
}

/// Stationary activations (keys, values) must all be here before the first chunk: the transfers that bring them
/// into each line of op i.
std::vector<std::vector<std::uint32_t>> stationary_deps(pipeline& pl, size_t i, std::uint32_t opi) {
    const op_info& o = pl.an.ops[i];
    const op_state& s = pl.st[i];
    const fabric& f = pl.f;
    const int L = s.L, S = s.S;
    std::vector<std::vector<std::uint32_t>> stat_deps(static_cast<size_t>(L));
    for (const source& src : o.stat_flows) {
        if (src.producer >= 0)
            flow_from(pl.prog, f, opi, pl.st[static_cast<size_t>(src.producer)], src.bytes, 0, 1, s, stat_deps);
        else if (f.mx)
            for (int l = 0; l < L; ++l)
                to_line(pl.prog, f, opi, f.mx_port(f.mx_port_of_cross[static_cast<size_t>(f.cross0(s.r) + l)]), s.r, l,
                        S, src.bytes / L, {}, stat_deps[static_cast<size_t>(l)]);
        else
            pl.inputs_resident = true;
    }
    return stat_deps;
}

/// The transfers that bring rows [r0, r1) of op i's streamed inputs into each of its lines.
std::vector<std::vector<std::uint32_t>> chunk_inputs(pipeline& pl, size_t i, std::uint32_t opi, double r0, double r1) {
    const op_info& o = pl.an.ops[i];
    const op_state& s = pl.st[i];
    const fabric& f = pl.f;
    const int L = s.L, S = s.S, c = s.chunks;
    std::vector<std::vector<std::uint32_t>> deps(static_cast<size_t>(L));
    for (const source& src : o.streamed) {
        if (src.producer >= 0) {
            flow_from(pl.prog, f, opi, pl.st[static_cast<size_t>(src.producer)], src.bytes, r0, r1, s, deps);
        } else if (f.mx) {
            for (int l = 0; l < L; ++l)
                to_line(pl.prog, f, opi, f.mx_port(f.mx_port_of_cross[static_cast<size_t>(f.cross0(s.r) + l)]), s.r, l,
                        S, src.bytes / c / L, {}, deps[static_cast<size_t>(l)]);
        } else {
            pl.inputs_resident = true;
        }
    }
    return deps;
}

/// The step after which each output port of op i holds a chunk's output, from the chunk's compute steps.
void chunk_ready(pipeline& pl, size_t i, std::uint32_t opi, const std::vector<std::uint32_t>& comps,
                 std::vector<std::uint32_t>& ready) {
    const op_info& o = pl.an.ops[i];
    const op_state& s = pl.st[i];
    const fabric& f = pl.f;
    program& prog = pl.prog;
    const int L = s.L, S = s.S, c = s.chunks;
    const bool by_column = o.style == op_style::gemm;
    if (by_column && L > 1) {
        // Partial sums down each column to line 0.
        const std::uint32_t join = prog.add_delay(opi, 0, comps);
        for (int q = 0; q < S; ++q)
            ready[static_cast<size_t>(q)] =
                prog.add_transfer(opi, f.at(s.r, L - 1, q), f.at(s.r, 0, q), whole_bytes(o.out_bytes / c / S), {join});
    } else if (by_column) {
        std::fill(ready.begin(), ready.end(), comps[0]);
    } else if (o.stats_reduce && L > 1) {
        // Statistics (two fp32 values per row) summed down each column and broadcast back up.
        const double stat_bytes = 8.0 * static_cast<double>(o.col_cap) / c / S;
        const std::uint32_t join = prog.add_delay(opi, 0, comps);
        std::vector<std::uint32_t> ups;
        for (int q = 0; q < S; ++q) {
            const std::uint32_t down =
                prog.add_transfer(opi, f.at(s.r, L - 1, q), f.at(s.r, 0, q), whole_bytes(stat_bytes), {join});
            ups.push_back(
                prog.add_transfer(opi, f.at(s.r, 0, q), f.at(s.r, L - 1, q), whole_bytes(stat_bytes), {down}));
        }
        std::fill(ready.begin(), ready.end(), prog.add_delay(opi, 0, ups));
    } else {
        for (int l = 0; l < L; ++l) ready[static_cast<size_t>(l)] = comps[static_cast<size_t>(l)];
    }
}

/// Chunk j of op i: its inputs, a compute step on each line, its output at the ports and, for a graph output,
/// the transfers back out; records its first compute steps and its completion in `rec`.
void emit_chunk(pipeline& pl, size_t i, std::uint32_t opi, std::uint32_t wi, int j,
                const std::vector<std::vector<std::uint32_t>>& stat_deps, op_record& rec) {
    const op_info& o = pl.an.ops[i];
    op_state& s = pl.st[i];
    const fabric& f = pl.f;
    program& prog = pl.prog;
    const int L = s.L, c = s.chunks;
    const int Q = o.style == op_style::gemm ? s.S : L;
    const double r0 = static_cast<double>(j) / c, r1 = static_cast<double>(j + 1) / c;
    std::vector<std::vector<std::uint32_t>> deps = chunk_inputs(pl, i, opi, r0, r1);
    std::vector<std::uint32_t> comps(static_cast<size_t>(L));
    for (int l = 0; l < L; ++l) {
        auto& d = deps[static_cast<size_t>(l)];
        if (j == 0)
            d.insert(d.end(), stat_deps[static_cast<size_t>(l)].begin(), stat_deps[static_cast<size_t>(l)].end());
        if (s.last[static_cast<size_t>(l)] != ~0u) d.push_back(s.last[static_cast<size_t>(l)]);
        comps[static_cast<size_t>(l)] = s.last[static_cast<size_t>(l)] =
            f.compute_on(prog, opi, s.lines[static_cast<size_t>(l)], wi, d);
    }
    if (j == 0) rec.start_steps = comps;
    auto& ready = s.ready[static_cast<size_t>(j)];
    chunk_ready(pl, i, opi, comps, ready);
    std::vector<std::uint32_t> all(ready.begin(), ready.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    rec.chunk_done.push_back(prog.add_delay(opi, 0, all));
    // Graph outputs go back out through the edge ports, each port's along its own share of the op's lines:
    // a matrix product's ports all sit on line 0, and sent along that one line they would queue on its
    // links to a single MemoryX port (32 bits a cycle) instead of sharing the system I/O.
    if (o.graph_output && f.mx) {
        for (int q = 0; q < Q; ++q) {
            const port& pq = s.ports[static_cast<size_t>(q)];
            const int line = static_cast<int>((static_cast<std::int64_t>(q) * L) / Q);
            const std::int32_t mxp = f.mx_port_of_cross[static_cast<size_t>(f.cross0(s.r) + line)];
            prog.add_transfer(opi, pq.pe, f.mx_port(mxp), whole_bytes(o.out_bytes / c / Q),
                              {ready[static_cast<size_t>(q)]});
        }
    }
}

/// What the plan needs of op i after the loop: its own time per chunk, its output stream, and every flow it
/// sends per chunk on the fabric (the routes that feed its chunks kept apart).
void plan_op(pipeline& pl, size_t i, const estimate& e) {
    const op_info& o = pl.an.ops[i];
    const op_state& s = pl.st[i];
    const fabric& f = pl.f;
    const int L = s.L, S = s.S, c = s.chunks;
    const double P = static_cast<double>(L) * S;
    const bool by_column = o.style == op_style::gemm;
    const int Q = by_column ? S : L;
    const double t_work = e.work / P, t_in = e.in / L;
    pl.own[i] = f.paths.overhead_cycles + std::max(t_work, t_in);
    pl.own_limit[i] = t_work >= t_in ? e.work_limit : "input stream";
    pl.out_stream[i] = e.out / (by_column ? S : L) * std::max(1, pl.readers[i]);
    auto flow = [&](const route& r, double bytes, bool feeds) {
        pl.flows[i].push_back({r, bytes});
        if (feeds) pl.inbound[i].push_back(r);
    };
    std::vector<route> rs;
    for (const source& src : o.streamed) {
        rs.clear();
        if (src.producer >= 0) {
            // As flow_from: each producer port sends the features it holds to the lines that take them.
            const op_state& ps = pl.st[static_cast<size_t>(src.producer)];
            port_lines(ps, L, [&](size_t q, int l, double fo) {
                const endpoint pe = ps.ports[q].pe;
                rs.clear();
                routes_to_line(f, f.pos_of(pe.unit), f.cross_of(pe.unit), s.r, l, S, rs);
                for (const route& r : rs) flow(r, src.bytes * fo / c, true);
            });
        } else if (f.mx) {
            for (int l = 0; l < L; ++l) {
                const size_t mxp = static_cast<size_t>(f.mx_port_of_cross[static_cast<size_t>(f.cross0(s.r) + l)]);
                rs.clear();
                routes_to_line(f, f.mx_port_pos[mxp], f.mx_port_cross[mxp], s.r, l, S, rs);
                for (const route& r : rs) flow(r, src.bytes / c / L, true);
            }
        }
    }
    const int p0 = f.pos0(s.r), c0 = f.cross0(s.r);
    if (by_column && L > 1)
        for (int q = 0; q < S; ++q) flow(route{p0 + q, c0 + L - 1, p0 + q, c0}, o.out_bytes / c / S, true);
    else if (!by_column && o.stats_reduce && L > 1)
        for (int q = 0; q < S; ++q) {
            const double stat_bytes = 8.0 * static_cast<double>(o.col_cap) / c / S;
            flow(route{p0 + q, c0 + L - 1, p0 + q, c0}, stat_bytes, true);
            flow(route{p0 + q, c0, p0 + q, c0 + L - 1}, stat_bytes, true);
        }
    if (o.graph_output && f.mx)
        for (int q = 0; q < Q; ++q) {
            const port& pq = s.ports[static_cast<size_t>(q)];
            const int line = static_cast<int>((static_cast<std::int64_t>(q) * L) / Q);
            const size_t mxp = static_cast<size_t>(f.mx_port_of_cross[static_cast<size_t>(c0 + line)]);
            flow(route{f.pos_of(pq.pe.unit), f.cross_of(pq.pe.unit), f.mx_port_pos[mxp], f.mx_port_cross[mxp]},
                 o.out_bytes / c / Q, false);
        }
}

/// Op i on rectangle r, chunk by chunk as `e` plans it: its SRAM, its lines, its steps and what the plan needs of
/// it; adds its entry to the details, its region to `out` and its record to `report`.
void emit_op(pipeline& pl, size_t i, const rect& r, const estimate& e, mapping& out, plan_report& report) {
    const op_info& o = pl.an.ops[i];
    op_state& s = pl.st[i];
    const fabric& f = pl.f;
    program& prog = pl.prog;
    s.r = r;
    std::tie(s.L, s.S) = lines_and_columns(o, f, s.r);
    s.chunks = e.chunks;
    const int L = s.L, S = s.S, c = s.chunks;
    const double P = static_cast<double>(L) * S;
    const double stat_pe = o.stationary_bytes() / P, work_pe = working_bytes(o, L, S);
    pl.sram.place(f.used_span(s.r, L, S), stat_pe + work_pe, "op '" + o.name + "' (weights, state and buffers)");
    const std::uint32_t opi = prog.intern_op(o.name);
    for (int l = 0; l < L; ++l) s.lines.push_back(add_span(prog, f.line_span(s.r, l, S)));
    s.last.assign(static_cast<size_t>(L), ~0u);
    // One chunk's work on each PE.
    const std::uint32_t wi = prog.add_work(chunk_work(o, pl.g, L, S, c));
    add_ports(s, f, o.style == op_style::gemm);
    op_record rec;
    rec.name = o.name;
    rec.kind = o.kind;
    rec.chunks = c;
    rec.pes = static_cast<std::int64_t>(P);
    const std::vector<std::vector<std::uint32_t>> stat_deps = stationary_deps(pl, i, opi);
    for (int j = 0; j < c; ++j) emit_chunk(pl, i, opi, wi, j, stat_deps, rec);
    plan_op(pl, i, e);
    nlohmann::json d;
    d["op"] = o.name;
    d["kind"] = o.kind;
    d["rect"] = {s.r.x0, s.r.y0, s.r.x1, s.r.y1};
    d["lines"] = L;
    d["columns"] = S;
    d["pes"] = static_cast<std::int64_t>(P);
    d["chunks"] = c;
    d["bytes_per_pe"] = stat_pe + work_pe;
    d["stationary_bytes_per_pe"] = stat_pe;
    d["working_bytes_per_pe"] = work_pe;
    d["capacity_bytes"] = f.pe_array->capacity_bytes();
    pl.ops.push_back(d);
    out.regions.emplace_back(f.pe_group, floorplan_region{o.name, s.r.x0, s.r.y0, s.r.x1, s.r.y1});
    report.ops.push_back(std::move(rec));
}

/// The plan's expectation for each op: the interval between its chunks' completions, from a schedule of chunks
/// in cycles. A chunk computes once its input has arrived and the chunk before it is done, for its own time
/// (its work, or the stream into its lines) or, where longer, what the busiest fabric link on the routes that
/// feed it needs for one chunk of every flow crossing it while it works (pl.link). A producer's chunk reaches its
/// readers after its output stream, which its ports send once per op that reads it (read by three ops, the output
/// crosses the same links three times); a stationary input (keys, values) must be whole before the first chunk;
/// graph inputs arrive at the MemoryX I/O rate (`mx_bpc` bytes a cycle).
void schedule(pipeline& pl, plan_report& report, double mx_bpc) {
    const analysis& an = pl.an;
    for (size_t i = 0; i < an.ops.size(); ++i) {
        const op_info& o = an.ops[i];
        const int c = pl.st[i].chunks;
        const double per_chunk = std::max(pl.own[i], pl.link[i]);
        std::vector<double>& done = pl.done_at[i];
        std::vector<std::string> waited(static_cast<size_t>(c));  // what chunk j waited for, if anything
        done.assign(static_cast<size_t>(c), 0.0);
        double stationary_at = 0;
        std::string stationary_from;
        for (const source& src : o.stat_flows)
            if (src.producer >= 0 && pl.sent_at[static_cast<size_t>(src.producer)].back() > stationary_at) {
                stationary_at = pl.sent_at[static_cast<size_t>(src.producer)].back();
                stationary_from = an.ops[static_cast<size_t>(src.producer)].name;
            }
        for (int j = 0; j < c; ++j) {
            double arrive = j == 0 ? stationary_at : 0;
            if (j == 0 && stationary_at > 0) waited[0] = "all of " + stationary_from;
            const double r0 = static_cast<double>(j) / c, r1 = static_cast<double>(j + 1) / c;
            for (const source& src : o.streamed) {
                if (src.producer >= 0) {
                    const size_t p = static_cast<size_t>(src.producer);
                    const int cp = static_cast<int>(pl.sent_at[p].size());
                    for (int k = 0; k < cp; ++k)
                        if (overlap(static_cast<double>(k) / cp, static_cast<double>(k + 1) / cp, r0, r1) > 0 &&
                            pl.sent_at[p][static_cast<size_t>(k)] > arrive) {
                            arrive = pl.sent_at[p][static_cast<size_t>(k)];
                            waited[static_cast<size_t>(j)] = an.ops[p].name + "'s output";
                        }
                } else if (mx_bpc > 0) {
                    const double t = (j + 1) * src.bytes / c / mx_bpc;
                    if (t > arrive) {
                        arrive = t;
                        waited[static_cast<size_t>(j)] = "MemoryX input";
                    }
                }
            }
            const double prev = j > 0 ? done[static_cast<size_t>(j - 1)] : 0;
            if (prev >= arrive) waited[static_cast<size_t>(j)].clear();
            done[static_cast<size_t>(j)] = std::max(prev, arrive) + per_chunk;
        }
        std::vector<double>& sent = pl.sent_at[i];
        sent.assign(static_cast<size_t>(c), 0.0);
        for (int j = 0; j < c; ++j)
            sent[static_cast<size_t>(j)] =
                std::max(done[static_cast<size_t>(j)], j > 0 ? sent[static_cast<size_t>(j - 1)] : 0.0) +
                pl.out_stream[i];
        op_record& rec = report.ops[i];
        rec.planned_cycles = c > 1 ? (done.back() - done.front()) / (c - 1) : per_chunk;
        rec.limit = !waited.back().empty()   ? waited.back()
                    : pl.link[i] > pl.own[i] ? "fabric links into it"
                                             : pl.own_limit[i];
    }
}

/// The busiest link on the routes into each op (pl.link, in cycles per chunk), with the load of the ops at work in
/// the same windows of the schedule so far.
void load_links(pipeline& pl) {
    const fabric& f = pl.f;
    const size_t n = pl.an.ops.size();
    // Windows of the first schedule; an op works from its first chunk's start to its last chunk's output.
    constexpr int windows = 8;
    double end = 0;
    for (size_t i = 0; i < n; ++i) end = std::max(end, pl.sent_at[i].back());
    auto window = [&](double t) {
        return std::clamp(static_cast<int>(t / std::max(end, 1e-9) * windows), 0, windows - 1);
    };
    std::vector<std::pair<int, int>> at_work(n);
    for (size_t i = 0; i < n; ++i)
        at_work[i] = {window(pl.done_at[i].front() - pl.own[i]), window(pl.sent_at[i].back())};
    link_load load(f.stream_x ? f.W : f.H, f.stream_x ? f.H : f.W, windows);
    for (size_t i = 0; i < n; ++i)
        for (const auto& [r, bytes] : pl.flows[i]) load.add(r, bytes, at_work[i].first, at_work[i].second);
    load.settle();
    for (size_t i = 0; i < n; ++i) {
        double most = 0;
        for (const route& r : pl.inbound[i])
            most = std::max(most, load.most_on(r, at_work[i].first, at_work[i].second));
        pl.link[i] = most / f.link_bpc;
    }
}

/// The mapping's details and notes on the pipeline: its ops, PEs and SRAM, the slowest op and the quantum.
void describe(mapping& out, const pipeline& pl, const plan_report& report, const wafer_pipeline_mapper::options& opt,
              double stationary, size_t slowest_op, double slowest) {
    const fabric& f = pl.f;
    const analysis& an = pl.an;
    const size_t n = an.ops.size();
    const std::int64_t total = static_cast<std::int64_t>(f.W) * f.H;
    std::int64_t used_pes = 0;
    for (const auto& s : pl.st) used_pes += static_cast<std::int64_t>(s.L) * s.S;
    out.samples = an.samples;
    out.details["mapper"] = "wafer_pipeline";
    out.details["mode"] = "layer-pipelined";
    out.details["pes"] = total;
    out.details["pes_used"] = used_pes;
    out.details["stationary_bytes"] = stationary;
    out.details["sram_used_max"] = pl.sram.max_used_bytes();
    out.details["ops"] = pl.ops;
    out.notes.push_back(
        "layer-pipelined: " + std::to_string(n) + " ops on " + std::to_string(f.W) + " x " + std::to_string(f.H) +
        " PEs (" + format_number(100.0 * static_cast<double>(used_pes) / static_cast<double>(total), 3) +
        "% doing work), weights and state " + format_bytes(stationary) + " in SRAM (" +
        format_number(
            100.0 * stationary / (static_cast<double>(total) * static_cast<double>(f.pe_array->capacity_bytes())), 3) +
        "% of it), " + std::to_string(opt.common.chunks) + " chunks per op, most on one PE " +
        format_bytes(static_cast<double>(pl.sram.max_used_bytes())) + " of " +
        format_bytes(static_cast<double>(f.pe_array->capacity_bytes())));
    out.notes.push_back(std::string("lines run along ") + (f.stream_x ? "x" : "y") +
                        " (the fabric's last routing leg); " + "planned slowest op " + an.ops[slowest_op].name +
                        " at " + cycles_text(slowest, f.pe_model->clock()) + " per chunk (" +
                        report.ops[slowest_op].limit + ")");
    if (out.prog.quantum > 0)
        out.notes.push_back("fabric requests served up to " + format_time(ticks_to_seconds(out.prog.quantum)) +
                            " ahead of queued ones (mapper.quantum=" + opt.quantum + "; 0 for exact arrival order)");
    if (n <= 40)
        for (size_t i = 0; i < n; ++i)
            out.notes.push_back(an.ops[i].name + ": " + std::to_string(pl.st[i].L) + " lines x " +
                                std::to_string(pl.st[i].S) + " PEs at (" + std::to_string(pl.st[i].r.x0) + "," +
                                std::to_string(pl.st[i].r.y0) + "), " +
                                format_bytes(static_cast<double>(pl.sram.used_bytes(pl.st[i].r.x0, pl.st[i].r.y0))) +
                                " per PE, " + report.ops[i].limit + "-bound");
    if (pl.inputs_resident)
        out.notes.push_back("no MemoryX on the platform: graph inputs start on the wafer, outputs stay there");
    for (const auto& note : an.notes) out.notes.push_back(note);
}

}  // namespace
}  // namespace wafer

mapping wafer_pipeline_mapper::map(const workload_graph& g, const platform& plat) const {
    using namespace wafer;  // the pipeline planner's steps (a using-directive here, not at file scope: unity builds)
    const std::string who = "wafer_pipeline mapper";
    const fabric f = fabric::find(plat, m_opt.common, who);
    const analysis an = analyse(g, *f.pe_model);
    const std::int64_t total = static_cast<std::int64_t>(f.W) * f.H;
    const size_t n = an.ops.size();
    auto planned = std::make_shared<plan_report>();
    plan_report& report = *planned;  // the record of what was planned, for the explainer
    report.clk = f.pe_model->clock();

    // What each op needs, and whether the model fits at all.
    const demand d = assess_fit(an, f, m_opt.common.chunks);
    const bool fits = d.need <= total && static_cast<std::int64_t>(n) <= total;
    if (!fits)
        return fall_back(misfit(d, g, plat, f, total),
                         "; use weight streaming (mapper.fallback=streaming or mapper.impl=wafer_streaming)", g, f, an,
                         m_opt);

    std::vector<double> weight = balance_pes(an, d, total);
    std::vector<rect> rects(n);
    if (!lay_out_rects(an, f, weight, rects)) {
        const std::string why = "layer-pipelined, '" + g.name + "' needs " + std::to_string(d.need) + " of the " +
                                std::to_string(total) +
                                " PEs for its weights but no layout of rectangles gives every op enough";
        return fall_back(why, "; use weight streaming (mapper.impl=wafer_streaming)", g, f, an, m_opt);
    }

    mapping out;
    out.record = planned;
    program& prog = out.prog;
    prog.name = g.name;
    pipeline pl(g, f, an, prog);
    for (size_t i = 0; i < n; ++i) emit_op(pl, i, rects[i], d.est[i], out, report);
    // The schedule runs twice: first without the links, to find when each op works, then with the load of the ops
    // at work in the same windows of that first schedule.
    const double mx_bpc = f.mx ? f.mx->peak_bytes_per_second() / report.clk.hz : 0;
    schedule(pl, report, mx_bpc);
    load_links(pl);
    schedule(pl, report, mx_bpc);
    double slowest = 0;
    size_t slowest_op = 0;
    for (size_t i = 0; i < n; ++i) {
        const op_record& rec = report.ops[i];
        pl.ops[i]["planned_cycles_per_chunk"] = rec.planned_cycles;
        pl.ops[i]["planned_limit"] = rec.limit;
        if (rec.planned_cycles > slowest) {
            slowest = rec.planned_cycles;
            slowest_op = i;
        }
    }
    prog.quantum = run_quantum(m_opt.quantum, slowest, f.pe_model->clock());
    report.mode = "layer-pipelined";
    report.samples = an.samples;
    report.chunks = static_cast<double>(d.est.empty() ? 1 : d.est.front().chunks);
    describe(out, pl, report, m_opt, d.stationary, slowest_op, slowest);
    return out;
}

TESSEL_REGISTER_MAPPER(make_mapper<wafer_pipeline_mapper>(
    "wafer_pipeline",
    "layer-pipelined wafer-scale execution: each op on its own rectangle of PEs with its weights in "
    "SRAM, activations streaming between rectangles; falls back to weight streaming when it does not fit"));

}  // namespace tessel
