#include "engine/mappers/wafer_pipeline_layout.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tessel::wafer {

std::pair<int, int> lines_and_columns(const op_info& o, const fabric& f, const rect& r) {
    const int L = static_cast<int>(std::min<std::int64_t>(f.lines(r), o.row_cap));
    const int S = static_cast<int>(std::min<std::int64_t>(f.length(r), o.col_cap));
    return {std::max(1, L), std::max(1, S)};
}

double working_bytes(const op_info& o, int L, int S) {
    const double out_share = o.style == op_style::gemm ? o.features_out / S : o.features_out / L;
    return 2 * o.eb * (o.features_in / L + out_share);
}

namespace {

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

/// Why no rectangle on the wafer holds op `o`.
std::string no_rectangle_holds(const op_info& o, const fabric& f) {
    // The op spread over the most PEs it can use (one line per distinct input feature, one column per
    // distinct output, at most the wafer): what that leaves on each PE against what a PE holds.
    const int L =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.row_cap, f.stream_x ? f.H : f.W)));
    const int S =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.col_cap, f.stream_x ? f.W : f.H)));
    const double per_pe = bytes_per_pe(o, L, S);
    return "op '" + o.name + "' alone needs " + format_bytes(o.stationary_bytes()) +
           " of weights and state; over the most PEs it can use (" + std::to_string(L) + " lines x " +
           std::to_string(S) + ") that is " + format_bytes(per_pe) + " per PE with its buffers, and a PE has " +
           format_bytes(f.usable) + " for data" +
           (per_pe > f.usable ? " (" + format_bytes(per_pe - f.usable) + " short)" : std::string());
}

}  // namespace

demand assess_fit(const analysis& an, const fabric& f, std::int64_t chunks) {
    const size_t n = an.ops.size();
    const std::int64_t total = static_cast<std::int64_t>(f.W) * f.H;
    demand d;
    d.est.resize(n);
    d.pmin.resize(n);
    for (size_t i = 0; i < n; ++i) {
        d.est[i] = estimate_op(an.ops[i], f, chunks);
        d.pmin[i] = min_pes(an.ops[i], f);
        d.stationary += an.ops[i].stationary_bytes();
        if (d.pmin[i] < 0) {
            d.need = total + 1;
            d.worst_op = no_rectangle_holds(an.ops[i], f);
            break;
        }
        d.need += d.pmin[i];
    }
    return d;
}

std::vector<double> balance_pes(const analysis& an, const demand& d, std::int64_t total) {
    // The smallest time per chunk T whose PE counts fit the wafer, by bisection.
    const size_t n = an.ops.size();
    auto pes_for = [&](size_t i, double T) {
        const estimate& e = d.est[i];
        const op_info& o = an.ops[i];
        const double side = std::max(e.in, e.out) / T;
        double p = std::max({static_cast<double>(d.pmin[i]), e.work / T, side * side});
        const double cap =
            std::max(static_cast<double>(d.pmin[i]), static_cast<double>(o.row_cap) * static_cast<double>(o.col_cap));
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
    return weight;
}

bool lay_out_rects(const analysis& an, const fabric& f, std::vector<double>& weight, std::vector<rect>& rects) {
    const size_t n = an.ops.size();
    bool placed = false;
    for (int attempt = 0; attempt < 40 && !placed; ++attempt) {
        split(rect{0, 0, f.W, f.H}, 0, static_cast<int>(n), weight, rects);
        placed = true;
        for (size_t i = 0; i < n; ++i) {
            const auto [L, S] = lines_and_columns(an.ops[i], f, rects[i]);
            const double b = bytes_per_pe(an.ops[i], L, S);
            if (b > f.usable) {
                placed = false;
                weight[i] *= std::max(1.2, b / f.usable * 1.05);
            }
        }
    }
    return placed;
}

}  // namespace tessel::wafer
