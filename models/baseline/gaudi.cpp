#include "models/baseline/gaudi.h"

#include <algorithm>
#include <sstream>

#include "models/core/registry.h"

namespace tessel {

void gaudi::mme_params::declare(param_decl& d) {
    d(count, "count", required, "matrix engines (MMEs) on the chip", bound::positive);
    d(rows, "rows", "256", "rows of one MME's output-stationary array (the M of an output tile)", bound::positive);
    d(cols, "cols", "256", "columns of one MME's array (the N of an output tile)", bound::positive);
    d(types, "types", "{bf16: 1}",
      "data types the MMEs multiply, as K steps per cycle (bf16: 1; fp8 at twice the rate: 2); others are an error");
}

void gaudi::tpc_params::declare(param_decl& d) {
    d(count, "count", required, "tensor processor cores (TPCs)", bound::positive);
    d(lanes, "lanes", required,
      "element operations per cycle of one TPC by data type (its SIMD width); types not listed run at the fp32 rate");
    d(special_per_cycle, "special_per_cycle", required,
      "transcendental results (exp, rsqrt, tanh) per cycle of one TPC", bound::positive);
}

void gaudi::params::declare(param_decl& d) {
    common.declare(d, "the on-die SRAM shared by the engines");
    d.group(mme, "mme", "the matrix engines");
    d.group(tpc, "tpc", "the tensor processor cores");
}

gaudi::gaudi(const sc_core::sc_module_name& n, const component_args& a) : engine_chip(n, a) {
    load_params(m_p, a);
    if (!m_p.tpc.lanes.has(dtype::fp32))
        throw input_error("component '" + a.config_path + "' (gaudi): tpc.lanes needs an fp32 rate", a.where);
    set_clock(m_p.common.clock);
    double widest = 0;  // the TPCs' peak: their widest SIMD type
    for (const auto& [t, lanes] : m_p.tpc.lanes.by_type) widest = std::max(widest, tpc_peak(t));
    start(m_p.common, {{"mme", "FLOP", mme_peak(), true, &m_p.mme.types}, {"tpc", "op", widest, false}}, a);
}

double gaudi::mme_peak() const { return static_cast<double>(m_p.mme.count * m_p.mme.rows * m_p.mme.cols) * clock().hz; }

double gaudi::tpc_peak(dtype t) const {
    const double lanes = m_p.tpc.lanes.has(t) ? m_p.tpc.lanes.at(t) : m_p.tpc.lanes.at(dtype::fp32);
    return static_cast<double>(m_p.tpc.count) * lanes * clock().hz;
}

double gaudi::special_peak() const {
    return static_cast<double>(m_p.tpc.count * m_p.tpc.special_per_cycle) * clock().hz;
}

double gaudi::mme_cycles(double batch, double m, double n, double k, double rate) const {
    const double rows = static_cast<double>(m_p.mme.rows), cols = static_cast<double>(m_p.mme.cols);
    const double tiles = batch * ceil_div(m, rows) * ceil_div(n, cols);
    const double per_mme = ceil_div(tiles, static_cast<double>(m_p.mme.count));
    return per_mme * std::max(ceil_div(k, rate), rows) + (rows + cols - 2);
}

engine_chip::op_plan gaudi::plan(const work& w, const kernel_desc* d) const {
    op_plan pl;
    pl.seconds.assign(2, 0);
    pl.work.assign(2, 0);
    const double hz = clock().hz;
    const double batch = static_cast<double>(std::max<std::int64_t>(1, w.batch));
    double tpc_ops = std::max(0.0, w.vector_ops), special = d ? d->special_ops : 0;
    std::ostringstream os;
    if (w.is_matmul() && w.macs > 0) {
        if (!m_p.mme.types.has(w.type))
            throw input_error("gaudi: the MMEs do not multiply " + std::string(dtype_name(w.type)) +
                              " (mme.types); run the workload in bf16 (--set workload.precision=bf16)");
        const double rate = m_p.mme.types.at(w.type);
        const double m = static_cast<double>(w.m), n = static_cast<double>(w.n), k = static_cast<double>(w.k);
        double cycles, done = 1;
        if (w.cls == op_class::attention) {
            // Scores Q.K^T (K = d) then P.V (K = keys); causal skips the tiles above the diagonal.
            const double dqk = k / 2, dv = k - dqk;
            if (d && d->causal && m > 1) done = std::min(1.0, (m + static_cast<double>(m_p.mme.rows)) / (2 * n));
            cycles = done * (mme_cycles(batch, m, n, dqk, rate) + mme_cycles(batch, m, dv, n, rate));
            special = done * batch * m * n;
            tpc_ops *= done;
            os << "attention on " << m_p.mme.count << " MMEs, softmax on " << m_p.tpc.count << " TPCs"
               << (done < 1 ? ", causal" : "");
        } else {
            cycles = mme_cycles(batch, m, n, k, rate);
            const double tiles =
                batch * ceil_div(m, static_cast<double>(m_p.mme.rows)) * ceil_div(n, static_cast<double>(m_p.mme.cols));
            os << static_cast<long long>(tiles) << " output tiles of " << m_p.mme.rows << "x" << m_p.mme.cols
               << " over " << m_p.mme.count << " MMEs, K = " << static_cast<long long>(k);
        }
        pl.seconds[0] = cycles / hz / common().op.matrix_efficiency;
        pl.work[0] = w.macs * done;
    } else {
        tpc_ops += std::max(0.0, w.macs);
        os << (d && d->rows > 0 ? "row-wise on " : "") << m_p.tpc.count << " TPCs";
    }
    pl.seconds[1] = tpc_ops / tpc_peak(w.type) + special / special_peak();
    pl.work[1] = tpc_ops + special;
    pl.sram_bytes = w.local_bytes();
    pl.text = os.str();
    return pl;
}

std::string gaudi::summary() const {
    std::ostringstream os;
    os << "Gaudi " << path() << ": " << m_p.mme.count << " MMEs of " << m_p.mme.rows << "x" << m_p.mme.cols << ", "
       << m_p.tpc.count << " TPCs at " << format_quantity(m_p.common.clock.q) << ", "
       << format_rate(2 * mme_peak(), "FLOP/s") << ", SRAM " << format_bytes(cache_capacity()) << ", HBM "
       << format_rate(hbm_peak(), "B/s");
    return os.str();
}

TESSEL_REGISTER_KIND(make_kind<gaudi>(
    "gaudi", "composite",
    "Intel Gaudi running operation after operation: output-stationary matrix engines (MMEs; padding to the array, "
    "fill and drain) pipelined with VLIW SIMD tensor processor cores (TPCs), an on-die SRAM kept between "
    "operations, device memory as a part (an hbm by default)"));

}  // namespace tessel
