#include "engine/mappers/wafer_pipeline.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/mappers/toolkit/sram_ledger.h"
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

namespace {

using namespace wafer;

/// The program's quantum in ticks: how far out of arrival order the run may serve the fabric's requests. Whole
/// models queue an event per hop in exact order (1.6 billion for a BERT-large training step); a quantum that is
/// a small share of the pipeline's interval between chunks changes what the plan is about by that share at most
/// (tests/wafer/quantum_test.cpp), and 64 cycles is 1/16 of a 4 KiB packet's time on a 32-bit link.
tick run_quantum(const std::string& text, double slowest_cycles, const clock_domain& clk) {
    if (text == "auto") return clk.cycles(std::min(64.0, std::floor(0.01 * slowest_cycles)));
    return time_or_cycles(parse_quantity(text), clk, "mapper.quantum", text,
                          "auto, 0 or a time such as 16cycles or 20ns");
}

/// An op's demands per chunk, in PE cycles: `work` spread over its PEs, `in` over its lines, `out` over its
/// columns (a matrix product's partial sums) or its lines (anything else's output).
struct estimate {
    int chunks = 1;
    double work = 0, in = 0, out = 0;
    std::string work_limit;  // "datapath" or "SRAM bandwidth"
};

estimate estimate_op(const op_info& o, const fabric& f, std::int64_t chunks) {
    const compute_model& t = *f.pe_model;
    estimate e;
    e.chunks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(chunks, o.out_rows)));
    const double c = e.chunks;
    const double macs = o.macs / c, vec = o.vec / c, out = o.out_bytes / c;
    double datapath = 0;
    if (macs > 0) datapath += macs / t.peak_macs_per_cycle(o.type);
    if (vec > 0) datapath += vec / t.peak_vector_ops_per_cycle(o.type);
    double reads, writes;
    if (o.style == op_style::gemm) {
        reads = 2 * macs * o.eb;  // the stationary operand and the accumulators
        writes = macs * o.eb;
    } else {
        reads = o.table ? out : 0;
        writes = out;
    }
    const double sram = std::max(reads / f.paths.read_bpc, writes / f.paths.write_bpc);
    e.work = std::max(datapath, sram);
    e.work_limit = datapath >= sram ? "datapath" : "SRAM bandwidth";
    const double lane = std::min(f.link_bpc, f.paths.ramp_bpc);
    e.in = o.in_bytes() / c / lane;
    e.out = out / f.link_bpc;
    return e;
}

/// Lines and columns an op uses in a rectangle.
std::pair<int, int> used(const op_info& o, const fabric& f, const rect& r) {
    const int L = static_cast<int>(std::min<std::int64_t>(f.lines(r), o.row_cap));
    const int S = static_cast<int>(std::min<std::int64_t>(f.length(r), o.col_cap));
    return {std::max(1, L), std::max(1, S)};
}

/// Working bytes per PE: one streamed row and one output row in flight, double buffered.
double working_bytes(const op_info& o, int L, int S) {
    const double out_share = o.style == op_style::gemm ? o.features_out / S : o.features_out / L;
    return 2 * o.eb * (o.features_in / L + out_share);
}

double bytes_per_pe(const op_info& o, int L, int S) {
    return o.stationary_bytes() / (static_cast<double>(L) * S) + working_bytes(o, L, S);
}

/// The fewest PEs that hold an op (a square-ish rectangle), or -1 when no rectangle on the wafer does.
std::int64_t min_pes(const op_info& o, const fabric& f) {
    const std::int64_t total = static_cast<std::int64_t>(f.W) * f.H;
    std::int64_t p = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(o.stationary_bytes() / f.usable)));
    for (int it = 0; it < 400 && p <= total; ++it) {
        const std::int64_t side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(p))));
        const int L = static_cast<int>(std::min<std::int64_t>({o.row_cap, side, f.stream_x ? f.H : f.W}));
        const int S = static_cast<int>(std::min<std::int64_t>({o.col_cap, (p + L - 1) / L, f.stream_x ? f.W : f.H}));
        if (bytes_per_pe(o, L, S) <= f.usable) return p;
        if (static_cast<std::int64_t>(L) * S < p && L >= std::min<std::int64_t>(o.row_cap, f.stream_x ? f.H : f.W) &&
            S >= std::min<std::int64_t>(o.col_cap, f.stream_x ? f.W : f.H))
            return -1;  // more PEs would sit idle: nothing left to spread over
        p = std::max(p + 1, static_cast<std::int64_t>(std::ceil(static_cast<double>(p) * 1.15)));
    }
    return -1;
}

/// Recursive bisection: ops [a, b) with weights w share rectangle r, earlier ops to the left or below.
void split(const rect& r, int a, int b, const std::vector<double>& w, std::vector<rect>& out) {
    if (b - a == 1) {
        out[static_cast<size_t>(a)] = r;
        return;
    }
    double total = 0;
    for (int i = a; i < b; ++i) total += w[static_cast<size_t>(i)];
    const bool along_x = (r.x1 - r.x0) >= (r.y1 - r.y0);
    const int side = along_x ? r.x1 - r.x0 : r.y1 - r.y0, other = along_x ? r.y1 - r.y0 : r.x1 - r.x0;
    // The split point nearest half the weight, then the cut that gives its ops their share of the side; both
    // parts keep at least one PE per op.
    int k = a + 1;
    double cum = w[static_cast<size_t>(a)], best = std::fabs(cum - total / 2), left = cum;
    for (int kk = a + 2; kk < b; ++kk) {
        cum += w[static_cast<size_t>(kk - 1)];
        const double d = std::fabs(cum - total / 2);
        if (d < best) {
            best = d;
            k = kk;
            left = cum;
        }
    }
    int cut = std::clamp(static_cast<int>(std::lround(side * left / total)), 1, side - 1);
    auto fits = [&](int kk, int c) {
        return static_cast<std::int64_t>(kk - a) <= static_cast<std::int64_t>(c) * other &&
               static_cast<std::int64_t>(b - kk) <= static_cast<std::int64_t>(side - c) * other;
    };
    if (!fits(k, cut)) {
        // Move the split point first, then the cut, until both parts hold their ops.
        const int kmin = std::max(a + 1, b - (side - cut) * other), kmax = std::min(b - 1, a + cut * other);
        if (kmin <= kmax) {
            k = std::clamp(k, kmin, kmax);
        } else {
            for (int c = 1; c < side; ++c)
                if (fits(k, c)) {
                    cut = c;
                    break;
                }
        }
        if (!fits(k, cut)) throw std::logic_error("wafer layout: no cut gives every op a PE");
    }
    rect r1 = r, r2 = r;
    if (along_x)
        r1.x1 = r2.x0 = r.x0 + cut;
    else
        r1.y1 = r2.y0 = r.y0 + cut;
    split(r1, a, k, w, out);
    split(r2, k, b, w, out);
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

/// A route over the fabric in stream coordinates: across the lines first (at the source's position), then along
/// the destination's line, as the mesh routes it (the lines run along its last leg).
struct route {
    int from_pos, from_cross, to_pos, to_cross;
};

/// Bytes per chunk on every fabric link in each of a few windows of the planned run, from the flows of the ops at
/// work in that window (each op on one chunk); and the most loaded link of a route over a range of windows.
/// Links are indexed by the node they leave, one array per direction and window, rows padded by one so a
/// segment's difference never spills into the next row.
class link_load {
public:
    link_load(int npos, int ncross, int windows) : m_npos(npos), m_ncross(ncross), m_windows(windows) {
        m_along_size = static_cast<size_t>(ncross) * (static_cast<size_t>(npos) + 1);
        m_across_size = static_cast<size_t>(npos) * (static_cast<size_t>(ncross) + 1);
        for (auto& a : m_along) a.assign(m_along_size * static_cast<size_t>(windows), 0.0f);
        for (auto& a : m_across) a.assign(m_across_size * static_cast<size_t>(windows), 0.0f);
    }
    int windows() const { return m_windows; }
    void add(const route& r, double bytes, int w0, int w1) {
        for (int w = w0; w <= w1; ++w) {
            if (r.to_cross != r.from_cross)
                segment(m_across, m_across_size * static_cast<size_t>(w), r.from_pos, m_ncross, r.from_cross,
                        r.to_cross, bytes);
            if (r.to_pos != r.from_pos)
                segment(m_along, m_along_size * static_cast<size_t>(w), r.to_cross, m_npos, r.from_pos, r.to_pos,
                        bytes);
        }
    }
    /// Turns the differences into loads and keeps each block's maximum (call once, after every add).
    void settle() {
        for (auto* set : {&m_along, &m_across})
            for (int d = 0; d < 2; ++d) {
                auto& a = (*set)[static_cast<size_t>(d)];
                const size_t stride =
                    set == &m_along ? static_cast<size_t>(m_npos) + 1 : static_cast<size_t>(m_ncross) + 1;
                for (size_t row = 0; row + stride <= a.size(); row += stride)
                    for (size_t k = 1; k < stride; ++k) a[row + k] += a[row + k - 1];
                auto& b = (set == &m_along ? m_along_blocks : m_across_blocks)[static_cast<size_t>(d)];
                b.assign((a.size() + block - 1) / block, 0.0f);
                for (size_t k = 0; k < a.size(); ++k) b[k / block] = std::max(b[k / block], a[k]);
            }
    }
    /// The most bytes per chunk any link of `r` carries in windows w0 .. w1.
    double most_on(const route& r, int w0, int w1) const {
        double m = 0;
        for (int w = w0; w <= w1; ++w) {
            if (r.to_cross != r.from_cross)
                m = std::max(m, most(m_across, m_across_blocks, m_across_size * static_cast<size_t>(w), r.from_pos,
                                     m_ncross, r.from_cross, r.to_cross));
            if (r.to_pos != r.from_pos)
                m = std::max(m, most(m_along, m_along_blocks, m_along_size * static_cast<size_t>(w), r.to_cross, m_npos,
                                     r.from_pos, r.to_pos));
        }
        return m;
    }

private:
    static constexpr size_t block = 32;
    using arrays = std::array<std::vector<float>, 2>;  // [0]: towards higher coordinates, [1]: towards lower
    /// The links leaving nodes [a, b) of the row (b > a: direction 0), or (b, a] (b < a: direction 1).
    static std::pair<size_t, size_t> links(size_t base, int row, int n, int a, int b, int& dir) {
        base += static_cast<size_t>(row) * (static_cast<size_t>(n) + 1);
        dir = b > a ? 0 : 1;
        return b > a ? std::pair{base + static_cast<size_t>(a), base + static_cast<size_t>(b)}
                     : std::pair{base + static_cast<size_t>(b) + 1, base + static_cast<size_t>(a) + 1};
    }
    static void segment(arrays& set, size_t base, int row, int n, int a, int b, double bytes) {
        int dir;
        const auto [lo, hi] = links(base, row, n, a, b, dir);
        set[static_cast<size_t>(dir)][lo] += static_cast<float>(bytes);
        set[static_cast<size_t>(dir)][hi] -= static_cast<float>(bytes);
    }
    static double most(const arrays& set, const arrays& blocks, size_t base, int row, int n, int a, int b) {
        int dir;
        const auto [lo, hi] = links(base, row, n, a, b, dir);
        const auto& v = set[static_cast<size_t>(dir)];
        const auto& bm = blocks[static_cast<size_t>(dir)];
        float m = 0;
        size_t k = lo;
        for (; k < hi && k % block; ++k) m = std::max(m, v[k]);
        for (; k + block <= hi; k += block) m = std::max(m, bm[k / block]);
        for (; k < hi; ++k) m = std::max(m, v[k]);
        return m;
    }
    int m_npos, m_ncross, m_windows;
    size_t m_along_size = 0, m_across_size = 0;
    arrays m_along, m_across, m_along_blocks, m_across_blocks;
};

/// The routes of a stream from (pos, cross) into line `l` of `r` (line_ends: one or two).
void routes_to_line(const fabric& f, int pos, int cross, const rect& r, int l, int len, std::vector<route>& out) {
    for (int end : line_ends(f, pos, r, len)) out.push_back(route{pos, cross, f.pos0(r) + end, f.cross0(r) + l});
}

}  // namespace

mapping wafer_pipeline_mapper::map(const workload_graph& g, const platform& plat) const {
    const std::string who = "wafer_pipeline mapper";
    const fabric f = fabric::find(plat, m_opt.common, who);
    const analysis an = analyse(g, *f.pe_model);
    const std::int64_t total = static_cast<std::int64_t>(f.W) * f.H;
    const size_t n = an.ops.size();
    auto planned = std::make_shared<plan_report>();
    plan_report& report = *planned;  // the record of what was planned, for the explainer
    report.clk = f.pe_model->clock();

    // What each op needs, and whether the model fits at all.
    std::vector<estimate> est(n);
    std::vector<std::int64_t> pmin(n);
    std::int64_t need = 0;
    double stationary = 0;
    std::string worst_op;
    for (size_t i = 0; i < n; ++i) {
        est[i] = estimate_op(an.ops[i], f, m_opt.common.chunks);
        pmin[i] = min_pes(an.ops[i], f);
        stationary += an.ops[i].stationary_bytes();
        if (pmin[i] < 0) {
            need = total + 1;
            // The op spread over the most PEs it can use (one line per distinct input feature, one column per
            // distinct output, at most the wafer): what that leaves on each PE against what a PE holds.
            const op_info& o = an.ops[i];
            const int L =
                static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.row_cap, f.stream_x ? f.H : f.W)));
            const int S =
                static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.col_cap, f.stream_x ? f.W : f.H)));
            const double per_pe = bytes_per_pe(o, L, S);
            worst_op = "op '" + o.name + "' alone needs " + format_bytes(o.stationary_bytes()) +
                       " of weights and state; over the most PEs it can use (" + std::to_string(L) + " lines x " +
                       std::to_string(S) + ") that is " + format_bytes(per_pe) +
                       " per PE with its buffers, and a PE has " + format_bytes(f.usable) + " for data" +
                       (per_pe > f.usable ? " (" + format_bytes(per_pe - f.usable) + " short)" : std::string());
            break;
        }
        need += pmin[i];
    }
    const bool fits = need <= total && static_cast<std::int64_t>(n) <= total;
    if (!fits) {
        const std::string why =
            "layer-pipelined, '" + g.name + "' does not fit on " + plat.title() + ": " +
            (!worst_op.empty()
                 ? worst_op
                 : "its weights and state (" + format_bytes(stationary) + ") and buffers need " + std::to_string(need) +
                       " PEs at " + format_bytes(f.usable) + " usable each, the wafer has " + std::to_string(total) +
                       " (" + format_number(100.0 * static_cast<double>(need - total) / static_cast<double>(total), 3) +
                       "% short)");
        if (m_opt.fallback == "none")
            throw input_error(why +
                              "; use weight streaming (mapper.fallback=streaming or mapper.impl=wafer_streaming)");
        mapping m = plan_streaming(g, f, an, m_opt.common, m_opt.max_microbatches);
        m.notes.insert(m.notes.begin(), why + ": running weight streaming instead (mapper.fallback=streaming)");
        m.details["fallback"] = why;
        return m;
    }

    // Balance: the smallest time per chunk T whose PE counts fit the wafer.
    auto pes_for = [&](size_t i, double T) {
        const estimate& e = est[i];
        const op_info& o = an.ops[i];
        const double side = std::max(e.in, e.out) / T;
        double p = std::max({static_cast<double>(pmin[i]), e.work / T, side * side});
        const double cap =
            std::max(static_cast<double>(pmin[i]), static_cast<double>(o.row_cap) * static_cast<double>(o.col_cap));
        return std::min({p, cap, static_cast<double>(total)});
    };
    auto sum_for = [&](double T) {
        double s = 0;
        for (size_t i = 0; i < n; ++i) s += std::ceil(pes_for(i, T));
        return s;
    };
    double lo = 1e-6, hi = 1e15;
    for (int it = 0; it < 200 && hi / lo > 1 + 1e-9; ++it) {
        const double mid = std::sqrt(lo * hi);
        if (sum_for(mid) <= static_cast<double>(total))
            hi = mid;
        else
            lo = mid;
    }
    std::vector<double> weight(n);
    for (size_t i = 0; i < n; ++i) weight[i] = std::ceil(pes_for(i, hi));

    // Layout, then check every op's SRAM in the rectangle it got; grow the ones that fall short and retry.
    std::vector<rect> rects(n);
    bool placed = false;
    for (int attempt = 0; attempt < 40 && !placed; ++attempt) {
        split(rect{0, 0, f.W, f.H}, 0, static_cast<int>(n), weight, rects);
        placed = true;
        for (size_t i = 0; i < n; ++i) {
            const auto [L, S] = used(an.ops[i], f, rects[i]);
            const double b = bytes_per_pe(an.ops[i], L, S);
            if (b > f.usable) {
                placed = false;
                weight[i] *= std::max(1.2, b / f.usable * 1.05);
            }
        }
    }
    if (!placed) {
        const std::string why = "layer-pipelined, '" + g.name + "' needs " + std::to_string(need) + " of the " +
                                std::to_string(total) +
                                " PEs for its weights but no layout of rectangles gives every op enough";
        if (m_opt.fallback == "none") throw input_error(why + "; use weight streaming (mapper.impl=wafer_streaming)");
        mapping m = plan_streaming(g, f, an, m_opt.common, m_opt.max_microbatches);
        m.notes.insert(m.notes.begin(), why + ": running weight streaming instead (mapper.fallback=streaming)");
        m.details["fallback"] = why;
        return m;
    }

    mapping out;
    out.record = planned;
    program& prog = out.prog;
    prog.name = g.name;
    toolkit::sram_ledger sram(*f.pe_array, prog);
    std::vector<op_state> st(n);
    nlohmann::json ops = nlohmann::json::array();
    bool inputs_resident = false;
    // For the plan's schedule (after the loop): each op's own cycles per chunk and what bounds them, its output
    // stream, the routes that feed its chunks, the fabric's load, and each chunk's planned completion.
    std::vector<double> own(n, 0.0), out_stream(n, 0.0);
    std::vector<std::string> own_limit(n);
    std::vector<std::vector<route>> inbound(n);
    std::vector<std::vector<std::pair<route, double>>> flows(n);  // every flow it sends per chunk, bytes each
    std::vector<std::vector<double>> done_at(n), sent_at(n);
    std::vector<int> readers(n, 0);  // ops reading each op's output (each gets its own copy of the stream)
    for (const op_info& o : an.ops) {
        for (const source& src : o.streamed)
            if (src.producer >= 0) ++readers[static_cast<size_t>(src.producer)];
        for (const source& src : o.stat_flows)
            if (src.producer >= 0) ++readers[static_cast<size_t>(src.producer)];
    }
    for (size_t i = 0; i < n; ++i) {
        const op_info& o = an.ops[i];
        op_state& s = st[i];
        s.r = rects[i];
        std::tie(s.L, s.S) = used(o, f, s.r);
        s.chunks = est[i].chunks;
        const int L = s.L, S = s.S, c = s.chunks;
        const double P = static_cast<double>(L) * S;
        const double stat_pe = o.stationary_bytes() / P, work_pe = working_bytes(o, L, S);
        sram.place(f.used_span(s.r, L, S), stat_pe + work_pe, "op '" + o.name + "' (weights, state and buffers)");
        const std::uint32_t opi = prog.intern_op(o.name);
        for (int l = 0; l < L; ++l) s.lines.push_back(add_span(prog, f.line_span(s.r, l, S)));
        s.last.assign(static_cast<size_t>(L), ~0u);
        // One chunk's work on each PE.
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
        const std::uint32_t wi = prog.add_work(w);
        // Output ports: a matrix product's outputs leave from the columns' ends at line 0; anything else's from
        // one PE of each line, staggered along the lines (every PE of a line holds part of its output) so the
        // first legs of the routes to the next rectangle run over different links instead of sharing one.
        const bool by_column = o.style == op_style::gemm;
        const int Q = by_column ? S : L;
        for (int q = 0; q < Q; ++q)
            s.ports.push_back(port{by_column
                                       ? f.at(s.r, 0, q)
                                       : f.at(s.r, q, S - 1 - static_cast<int>((static_cast<std::int64_t>(q) * S) / Q)),
                                   static_cast<double>(q) / Q, static_cast<double>(q + 1) / Q});
        s.ready.assign(static_cast<size_t>(c), std::vector<std::uint32_t>(static_cast<size_t>(Q), 0));
        op_record rec;
        rec.name = o.name;
        rec.kind = o.kind;
        rec.chunks = c;
        rec.pes = static_cast<std::int64_t>(P);
        // Stationary activations (keys, values) must all be here before the first chunk.
        std::vector<std::vector<std::uint32_t>> stat_deps(static_cast<size_t>(L));
        for (const source& src : o.stat_flows) {
            if (src.producer >= 0)
                flow_from(prog, f, opi, st[static_cast<size_t>(src.producer)], src.bytes, 0, 1, s, stat_deps);
            else if (f.mx)
                for (int l = 0; l < L; ++l)
                    to_line(prog, f, opi, f.mx_port(f.mx_port_of_cross[static_cast<size_t>(f.cross0(s.r) + l)]), s.r, l,
                            S, src.bytes / L, {}, stat_deps[static_cast<size_t>(l)]);
            else
                inputs_resident = true;
        }
        for (int j = 0; j < c; ++j) {
            const double r0 = static_cast<double>(j) / c, r1 = static_cast<double>(j + 1) / c;
            std::vector<std::vector<std::uint32_t>> deps(static_cast<size_t>(L));
            for (const source& src : o.streamed) {
                if (src.producer >= 0) {
                    flow_from(prog, f, opi, st[static_cast<size_t>(src.producer)], src.bytes, r0, r1, s, deps);
                } else if (f.mx) {
                    for (int l = 0; l < L; ++l)
                        to_line(prog, f, opi, f.mx_port(f.mx_port_of_cross[static_cast<size_t>(f.cross0(s.r) + l)]),
                                s.r, l, S, src.bytes / c / L, {}, deps[static_cast<size_t>(l)]);
                } else {
                    inputs_resident = true;
                }
            }
            std::vector<std::uint32_t> comps(static_cast<size_t>(L));
            for (int l = 0; l < L; ++l) {
                auto& d = deps[static_cast<size_t>(l)];
                if (j == 0)
                    d.insert(d.end(), stat_deps[static_cast<size_t>(l)].begin(),
                             stat_deps[static_cast<size_t>(l)].end());
                if (s.last[static_cast<size_t>(l)] != ~0u) d.push_back(s.last[static_cast<size_t>(l)]);
                comps[static_cast<size_t>(l)] = s.last[static_cast<size_t>(l)] =
                    f.compute_on(prog, opi, s.lines[static_cast<size_t>(l)], wi, d);
            }
            if (j == 0) rec.start_steps = comps;
            auto& ready = s.ready[static_cast<size_t>(j)];
            if (by_column && L > 1) {
                // Partial sums down each column to line 0.
                const std::uint32_t join = prog.add_delay(opi, 0, comps);
                for (int q = 0; q < S; ++q)
                    ready[static_cast<size_t>(q)] = prog.add_transfer(opi, f.at(s.r, L - 1, q), f.at(s.r, 0, q),
                                                                      whole_bytes(o.out_bytes / c / S), {join});
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
        // What the plan needs of this op after the loop: its own time per chunk, its output stream, and every flow
        // it sends per chunk on the fabric (the routes that feed its chunks kept apart).
        const estimate& e = est[i];
        const double t_work = e.work / P, t_in = e.in / L;
        own[i] = f.paths.overhead_cycles + std::max(t_work, t_in);
        own_limit[i] = t_work >= t_in ? e.work_limit : "input stream";
        out_stream[i] = e.out / (by_column ? S : L) * std::max(1, readers[i]);
        auto flow = [&](const route& r, double bytes, bool feeds) {
            flows[i].push_back({r, bytes});
            if (feeds) inbound[i].push_back(r);
        };
        std::vector<route> rs;
        for (const source& src : o.streamed) {
            rs.clear();
            if (src.producer >= 0) {
                // As flow_from: each producer port sends the features it holds to the lines that take them.
                const op_state& ps = st[static_cast<size_t>(src.producer)];
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
        ops.push_back(d);
        out.regions.emplace_back(f.pe_group, floorplan_region{o.name, s.r.x0, s.r.y0, s.r.x1, s.r.y1});
        report.ops.push_back(std::move(rec));
    }
    // The plan's expectation for each op: the interval between its chunks' completions, from a schedule of chunks
    // in cycles. A chunk computes once its input has arrived and the chunk before it is done, for its own time
    // (its work, or the stream into its lines) or, where longer, what the busiest fabric link on the routes that
    // feed it needs for one chunk of every flow crossing it while it works. A producer's chunk reaches its readers
    // after its output stream, which its ports send once per op that reads it (read by three ops, the output
    // crosses the same links three times); a stationary input (keys, values) must be whole before the first chunk;
    // graph inputs arrive at the MemoryX I/O rate. The schedule runs twice: first without the links, to find when
    // each op works, then with the load of the ops at work in the same windows of that first schedule.
    const double mx_bpc = f.mx ? f.mx->peak_bytes_per_second() / report.clk.hz : 0;
    std::vector<double> link(n, 0.0);
    auto schedule = [&]() {
        for (size_t i = 0; i < n; ++i) {
            const op_info& o = an.ops[i];
            const int c = st[i].chunks;
            const double per_chunk = std::max(own[i], link[i]);
            std::vector<double>& done = done_at[i];
            std::vector<std::string> waited(static_cast<size_t>(c));  // what chunk j waited for, if anything
            done.assign(static_cast<size_t>(c), 0.0);
            double stationary_at = 0;
            std::string stationary_from;
            for (const source& src : o.stat_flows)
                if (src.producer >= 0 && sent_at[static_cast<size_t>(src.producer)].back() > stationary_at) {
                    stationary_at = sent_at[static_cast<size_t>(src.producer)].back();
                    stationary_from = an.ops[static_cast<size_t>(src.producer)].name;
                }
            for (int j = 0; j < c; ++j) {
                double arrive = j == 0 ? stationary_at : 0;
                if (j == 0 && stationary_at > 0) waited[0] = "all of " + stationary_from;
                const double r0 = static_cast<double>(j) / c, r1 = static_cast<double>(j + 1) / c;
                for (const source& src : o.streamed) {
                    if (src.producer >= 0) {
                        const size_t p = static_cast<size_t>(src.producer);
                        const int cp = static_cast<int>(sent_at[p].size());
                        for (int k = 0; k < cp; ++k)
                            if (overlap(static_cast<double>(k) / cp, static_cast<double>(k + 1) / cp, r0, r1) > 0 &&
                                sent_at[p][static_cast<size_t>(k)] > arrive) {
                                arrive = sent_at[p][static_cast<size_t>(k)];
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
            std::vector<double>& sent = sent_at[i];
            sent.assign(static_cast<size_t>(c), 0.0);
            for (int j = 0; j < c; ++j)
                sent[static_cast<size_t>(j)] =
                    std::max(done[static_cast<size_t>(j)], j > 0 ? sent[static_cast<size_t>(j - 1)] : 0.0) +
                    out_stream[i];
            op_record& rec = report.ops[i];
            rec.planned_cycles = c > 1 ? (done.back() - done.front()) / (c - 1) : per_chunk;
            rec.limit = !waited.back().empty() ? waited.back()
                        : link[i] > own[i]     ? "fabric links into it"
                                               : own_limit[i];
        }
    };
    schedule();
    {
        // Windows of the first schedule; an op works from its first chunk's start to its last chunk's output.
        constexpr int windows = 8;
        double end = 0;
        for (size_t i = 0; i < n; ++i) end = std::max(end, sent_at[i].back());
        auto window = [&](double t) {
            return std::clamp(static_cast<int>(t / std::max(end, 1e-9) * windows), 0, windows - 1);
        };
        std::vector<std::pair<int, int>> at_work(n);
        for (size_t i = 0; i < n; ++i) at_work[i] = {window(done_at[i].front() - own[i]), window(sent_at[i].back())};
        link_load load(f.stream_x ? f.W : f.H, f.stream_x ? f.H : f.W, windows);
        for (size_t i = 0; i < n; ++i)
            for (const auto& [r, bytes] : flows[i]) load.add(r, bytes, at_work[i].first, at_work[i].second);
        load.settle();
        for (size_t i = 0; i < n; ++i) {
            double most = 0;
            for (const route& r : inbound[i])
                most = std::max(most, load.most_on(r, at_work[i].first, at_work[i].second));
            link[i] = most / f.link_bpc;
        }
    }
    schedule();
    double slowest = 0;
    size_t slowest_op = 0;
    for (size_t i = 0; i < n; ++i) {
        const op_record& rec = report.ops[i];
        ops[i]["planned_cycles_per_chunk"] = rec.planned_cycles;
        ops[i]["planned_limit"] = rec.limit;
        if (rec.planned_cycles > slowest) {
            slowest = rec.planned_cycles;
            slowest_op = i;
        }
    }
    prog.quantum = run_quantum(m_opt.quantum, slowest, f.pe_model->clock());
    report.mode = "layer-pipelined";
    report.samples = an.samples;
    report.chunks = static_cast<double>(est.empty() ? 1 : est.front().chunks);
    std::int64_t used_pes = 0;
    for (const auto& s : st) used_pes += static_cast<std::int64_t>(s.L) * s.S;
    out.samples = an.samples;
    out.details["mapper"] = "wafer_pipeline";
    out.details["mode"] = "layer-pipelined";
    out.details["pes"] = total;
    out.details["pes_used"] = used_pes;
    out.details["stationary_bytes"] = stationary;
    out.details["sram_used_max"] = sram.max_used_bytes();
    out.details["ops"] = ops;
    out.notes.push_back(
        "layer-pipelined: " + std::to_string(n) + " ops on " + std::to_string(f.W) + " x " + std::to_string(f.H) +
        " PEs (" + format_number(100.0 * static_cast<double>(used_pes) / static_cast<double>(total), 3) +
        "% doing work), weights and state " + format_bytes(stationary) + " in SRAM (" +
        format_number(
            100.0 * stationary / (static_cast<double>(total) * static_cast<double>(f.pe_array->capacity_bytes())), 3) +
        "% of it), " + std::to_string(m_opt.common.chunks) + " chunks per op, most on one PE " +
        format_bytes(static_cast<double>(sram.max_used_bytes())) + " of " +
        format_bytes(static_cast<double>(f.pe_array->capacity_bytes())));
    out.notes.push_back(std::string("lines run along ") + (f.stream_x ? "x" : "y") +
                        " (the fabric's last routing leg); " + "planned slowest op " + an.ops[slowest_op].name +
                        " at " + cycles_text(slowest, f.pe_model->clock()) + " per chunk (" +
                        report.ops[slowest_op].limit + ")");
    if (prog.quantum > 0)
        out.notes.push_back("fabric requests served up to " + format_time(ticks_to_seconds(prog.quantum)) +
                            " ahead of queued ones (mapper.quantum=" + m_opt.quantum + "; 0 for exact arrival order)");
    if (n <= 40)
        for (size_t i = 0; i < n; ++i)
            out.notes.push_back(an.ops[i].name + ": " + std::to_string(st[i].L) + " lines x " +
                                std::to_string(st[i].S) + " PEs at (" + std::to_string(st[i].r.x0) + "," +
                                std::to_string(st[i].r.y0) + "), " +
                                format_bytes(static_cast<double>(sram.used_bytes(st[i].r.x0, st[i].r.y0))) +
                                " per PE, " + report.ops[i].limit + "-bound");
    if (inputs_resident)
        out.notes.push_back("no MemoryX on the platform: graph inputs start on the wafer, outputs stay there");
    for (const auto& note : an.notes) out.notes.push_back(note);
    return out;
}

TESSEL_REGISTER_MAPPER(make_mapper<wafer_pipeline_mapper>(
    "wafer_pipeline",
    "layer-pipelined wafer-scale execution: each op on its own rectangle of PEs with its weights in "
    "SRAM, activations streaming between rectangles; falls back to weight streaming when it does not fit"));

}  // namespace tessel
