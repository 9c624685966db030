#include "models/baseline/neuron.h"

#include <algorithm>
#include <sstream>

#include "models/core/registry.h"

namespace tessel {

namespace {
enum : std::size_t { tensor_engine, vector_engine, scalar_engine, gpsimd_engine };
}

void neuron::tensor_params::declare(param_decl& d) {
    d(clock, "clock", required, "tensor engine clock");
    d(rows, "rows", "128", "rows of the systolic array (the K of a stationary tile: SBUF partitions)", bound::positive);
    d(cols, "cols", "128", "columns of the array (the N of a stationary tile)", bound::positive);
    d(types, "types", "{bf16: 1}",
      "data types the array multiplies, as moving rows per cycle (bf16: 1; fp8 at twice the rate: 2); others are "
      "an error");
    d(psum_free, "psum_free", "512", "fp32 results per partition in one PSUM bank: the moving rows of one matmul",
      bound::positive);
}

void neuron::engine_params::declare(param_decl& d) {
    d(clock, "clock", required, "the engine's clock");
    d(ops_per_cycle, "ops_per_cycle", required, "element operations per cycle of one NeuronCore's engine",
      bound::positive);
}

void neuron::params::declare(param_decl& d) {
    common.declare(d, "the NeuronCores' state buffers (SBUF), all cores together");
    d(cores, "cores", required, "NeuronCores that run each operation together", bound::positive);
    d.group(tensor, "tensor", "each NeuronCore's tensor engine");
    d.group(vector, "vector", "each NeuronCore's vector engine");
    d.group(scalar, "scalar", "each NeuronCore's scalar (activation) engine");
    d.group(gpsimd, "gpsimd", "each NeuronCore's GpSimd engine");
}

neuron::neuron(const sc_core::sc_module_name& n, const component_args& a) : engine_chip(n, a) {
    load_params(m_p, a);
    set_clock(m_p.common.clock);
    start(m_p.common,
          {{"tensor", "FLOP", tensor_peak(), true, &m_p.tensor.types},
           {"vector", "op", peak(m_p.vector), false},
           {"scalar", "op", peak(m_p.scalar), false},
           {"gpsimd", "op", peak(m_p.gpsimd), false}},
          a);
}

double neuron::tensor_peak() const {
    return static_cast<double>(m_p.cores * m_p.tensor.rows * m_p.tensor.cols) * m_p.tensor.clock.q.value;
}

double neuron::peak(const engine_params& e) const {
    return static_cast<double>(m_p.cores * e.ops_per_cycle) * e.clock.q.value;
}

double neuron::tensor_cycles(double batch, double m, double n, double k, double rate) const {
    const double rows = static_cast<double>(m_p.tensor.rows), cols = static_cast<double>(m_p.tensor.cols);
    const double folds = batch * ceil_div(k, rows) * ceil_div(n, cols);
    const double per_core = ceil_div(folds, static_cast<double>(m_p.cores));
    // The moving rows go in PSUM-bank chunks; each chunk at least as long as a weight load.
    const double chunk = static_cast<double>(m_p.tensor.psum_free);
    const double full = std::floor(m / chunk), rest = m - full * chunk;
    const double per_fold = full * std::max(chunk / rate, rows) + (rest > 0 ? std::max(rest / rate, rows) : 0.0);
    return per_core * per_fold + (rows + cols - 2);
}

engine_chip::op_plan neuron::plan(const work& w, const kernel_desc* d) const {
    op_plan pl;
    pl.seconds.assign(4, 0);
    pl.work.assign(4, 0);
    const double batch = static_cast<double>(std::max<std::int64_t>(1, w.batch));
    double vector_ops = std::max(0.0, w.vector_ops), special = d ? d->special_ops : 0, gathers = 0;
    std::ostringstream os;
    if (w.is_matmul() && w.macs > 0) {
        if (!m_p.tensor.types.has(w.type))
            throw input_error("neuron: the tensor engine does not multiply " + std::string(dtype_name(w.type)) +
                              " (tensor.types); run the workload in bf16 (--set workload.precision=bf16)");
        const double rate = m_p.tensor.types.at(w.type);
        const double m = static_cast<double>(w.m), n = static_cast<double>(w.n), k = static_cast<double>(w.k);
        double cycles, done = 1, evacuated;
        if (w.cls == op_class::attention) {
            const double dqk = k / 2, dv = k - dqk;
            if (d && d->causal && m > 1) done = std::min(1.0, (m + static_cast<double>(m_p.tensor.cols)) / (2 * n));
            cycles = done * (tensor_cycles(batch, m, n, dqk, rate) + tensor_cycles(batch, m, dv, n, rate));
            special = done * batch * m * n;
            vector_ops *= done;
            evacuated = done * batch * m * (n + dv);  // the scores and the output leave PSUM
            os << "attention on " << m_p.cores << " tensor engines, exp on the scalar engines"
               << (done < 1 ? ", causal" : "");
        } else {
            cycles = tensor_cycles(batch, m, n, k, rate);
            evacuated = batch * m * n;
            const double folds = batch * ceil_div(k, static_cast<double>(m_p.tensor.rows)) *
                                 ceil_div(n, static_cast<double>(m_p.tensor.cols));
            os << static_cast<long long>(folds) << " stationary tiles of " << m_p.tensor.rows << "x" << m_p.tensor.cols
               << " over " << m_p.cores << " NeuronCores, " << static_cast<long long>(m) << " moving rows into PSUM";
        }
        pl.seconds[tensor_engine] = cycles / m_p.tensor.clock.q.value / common().op.matrix_efficiency;
        pl.work[tensor_engine] = w.macs * done;
        vector_ops += evacuated;
    } else if (w.cls == op_class::embedding) {
        gathers = vector_ops + std::max(0.0, w.macs);
        vector_ops = 0;
        os << "gather on " << m_p.cores << " GpSimd engines";
    } else {
        vector_ops += std::max(0.0, w.macs);
        os << (d && d->rows > 0 ? "row-wise on " : "") << m_p.cores << " vector engines";
    }
    pl.seconds[vector_engine] = vector_ops / peak(m_p.vector);
    pl.work[vector_engine] = vector_ops;
    pl.seconds[scalar_engine] = special / peak(m_p.scalar);
    pl.work[scalar_engine] = special;
    pl.seconds[gpsimd_engine] = gathers / peak(m_p.gpsimd);
    pl.work[gpsimd_engine] = gathers;
    pl.sram_bytes = w.local_bytes();
    pl.text = os.str();
    return pl;
}

std::string neuron::summary() const {
    std::ostringstream os;
    os << "NeuronCores " << path() << ": " << m_p.cores << " x tensor engine " << m_p.tensor.rows << "x"
       << m_p.tensor.cols << " at " << format_quantity(m_p.tensor.clock.q) << ", "
       << format_rate(2 * tensor_peak(), "FLOP/s") << ", SBUF " << format_bytes(cache_capacity()) << ", HBM "
       << format_rate(hbm_peak(), "B/s");
    return os.str();
}

TESSEL_REGISTER_KIND(make_kind<neuron>(
    "neuron", "composite",
    "AWS Trainium / Inferentia2 running operation after operation: NeuronCores with a weight-stationary tensor "
    "engine accumulating in PSUM, vector, scalar and GpSimd engines on their own clocks, SBUF kept between "
    "operations, device memory as a part (an hbm by default)"));

}  // namespace tessel
