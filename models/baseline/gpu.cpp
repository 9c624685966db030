#include "models/baseline/gpu.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <queue>
#include <sstream>

#include "models/baseline/dram_stream.h"
#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void gpu::sm_params::declare(param_decl& d) {
    d(tensor_macs_per_cycle, "tensor_macs_per_cycle", required,
      "dense multiply-accumulates per cycle of one SM's tensor cores, per data type (fp32 without TF32 runs on "
      "the FP32 lanes instead)");
    d(fp32_lanes, "fp32_lanes", required, "FP32 fused multiply-add lanes (CUDA cores) per SM", bound::positive);
    d(sfu_lanes, "sfu_lanes", "16", "special-function results (exp, rsqrt, tanh) per cycle per SM", bound::positive);
    d(smem, "smem", required, "shared memory one SM gives its CTAs (operand tiles of the pipeline stages)",
      bound::positive);
    d(smem_bandwidth, "smem_bandwidth", "128B/cycle", "shared memory bandwidth of one SM (feeds the tensor cores)");
    d(max_threads, "max_threads", "2048", "resident threads per SM", bound::positive);
    d(max_ctas, "max_ctas", "32", "resident CTAs (thread blocks) per SM", bound::positive);
}

void gpu::l2_params::declare(param_decl& d) {
    d(capacity, "capacity", required, "L2 capacity: what stays on chip from one kernel to the next");
    d(bw, "bandwidth", required, "L2 bandwidth to the SMs, all slices together");
    d(block, "block", "64KiB",
      "granularity at which the model tracks what L2 holds (a modelling choice, not a line size)", bound::positive);
}

void gpu::tlb_params::declare(param_decl& d) {
    d(page, "page", "2MiB", "page size of device memory (CUDA maps large allocations in 2 MiB pages)", bound::positive);
    d(reach, "reach", "0B",
      "memory the last-level TLB maps at once; a kernel touching more misses on every page (0: no TLB model)");
    d(miss_cost, "miss_cost", "0ns", "time a page walk stalls a kernel's memory stream, per missed page; fitted");
}

namespace {
// One sustained element rate per row kernel that has its own instruction stream (not the plain vector one).
const std::pair<row_kernel, const char*> k_row_rates[] = {
    {row_kernel::warp,
     "elements per cycle per SM the one-warp-per-row softmax kernel sustains (rows of up to 1024); 0: no "
     "limit but bandwidth; fitted"},
    {row_kernel::registers,
     "elements per cycle per SM of the softmax kernel that holds a row in a 1024-thread CTA's registers (rows "
     "of 1025 to 9216); 0: no limit; fitted"},
    {row_kernel::shared,
     "elements per cycle per SM of the softmax kernel that keeps a row in shared memory (rows up to 48 KiB); 0: "
     "no limit; fitted"},
    {row_kernel::blocked,
     "elements per cycle per SM of the softmax kernel that reads a longer row once per pass; 0: no limit; fitted"},
    {row_kernel::welford,
     "elements per cycle per SM of layer norm's kernel (Welford's running mean and variance, a division per "
     "element; RMS norm only sums squares and has no such limit); 0: no limit; fitted"},
};
}  // namespace

void gpu::kernel_params::declare(param_decl& d) {
    d(launch_overhead, "launch_overhead", "0ns",
      "fixed time per kernel between the end of one kernel and the work of the next (dispatch, ramp-up, drain); "
      "fitted by tessel calibrate");
    d(cta_latency, "cta_latency", "0ns",
      "fixed time per CTA of a GEMM or attention kernel: filling the operand pipeline and storing the tile; fitted");
    d(row_latency, "row_latency", "0ns",
      "time of one dependent pass over a row in softmax kernels (load, block reduction, broadcast); in the "
      "layer-norm kernels, what each thread waits for one load; fitted");
    d(tensor_efficiency, "tensor_efficiency", "1",
      "fraction of the tensor-core peak a GEMM main loop sustains (issue, synchronisation, clock under load); fitted");
    d(simt_efficiency, "simt_efficiency", "1", "fraction of the FP32-lane peak kernels sustain; fitted");
    d(l2_efficiency, "l2_efficiency", "1",
      "fraction of the L2 bandwidth that load/store kernels reach (GEMM and attention tiles move by bulk "
      "asynchronous copies at the full rate); fitted");
    d(dram_efficiency, "dram_efficiency", "1",
      "fraction of the DRAM peak a kernel's threads can keep requested (memory-level parallelism); the DRAM "
      "model's own row and refresh losses come on top; fitted");
    d(tiles, "tiles", "256x128,128x256,128x128,128x64,64x128,64x64",
      "CTA output tiles (BMxBN) the GEMM library offers; the fastest is picked per kernel");
    d(k_tile, "k_tile", "64", "elements of K per pipeline stage (K is padded to a multiple)", bound::positive);
    d(max_split_k, "max_split_k", "16", "largest split of K over CTAs (split-K adds a reduction kernel)",
      bound::positive);
    d(cluster, "cluster", "1",
      "CTAs whose B-tile loads are shared (a Hopper thread-block cluster with TMA multicast; 1: none)",
      bound::positive);
    d(attention_tile, "attention_tile", "128x64", "query rows x key rows per block of the fused attention kernel");
    d(attention_overlap, "attention_overlap", "0",
      "fraction of the shorter of a key block's two phases (tensor-core products, softmax) that the attention "
      "kernel hides under the longer (warp-specialised kernels with asynchronous MMA: FlashAttention-3, "
      "cuDNN's sm90 kernels); fitted");
    d(decode_tile, "decode_tile", "16x128",
      "query rows x key rows per block of the decode attention kernel, used when there are fewer queries than "
      "query rows (one query padded to the MMA's 16 rows); its keys are split over CTAs to fill the SMs, and a "
      "second kernel combines the splits");
    d(fallback_efficiency, "fallback_efficiency", "1",
      "fraction of the tensor-core peak the library's fallback GEMM kernels sustain, which it runs when a leading "
      "dimension (K or N) is not a multiple of 16 bytes: no TMA, operands loaded in the alignment's width; fitted");
    d(narrow_load, "narrow_load", "0",
      "bytes one SM's fallback GEMM kernel loads per cycle per byte of load width (loads are as wide as the "
      "operands' alignment: 2, 4 or 8 bytes); 0: no limit; fitted");
    d(stream_k, "stream_k", "false",
      "persistent GEMM kernels share a partial last wave's tiles over all SMs along K (stream-K, Hopper's "
      "persistent tile schedulers), so a partial wave costs its share of the work plus a partial-tile fix-up");
    for (auto [kind, doc] : k_row_rates)
        d(row_rate[static_cast<int>(kind)], std::string("row_rate_") + row_kernel_word(kind), "0", doc);
    d(vector_bytes, "vector_bytes", "16B", "bytes one thread loads at once (row-wise kernels: elements per thread)",
      bound::positive);
    d(segment, "segment", "256KiB", "size of the DRAM requests a kernel's traffic is paced in", bound::positive);
}

void gpu::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "SM clock under load");
    d(sms, "sms", required, "streaming multiprocessors", bound::positive);
    d.group(sm, "sm", "one streaming multiprocessor");
    d.group(l2, "l2", "the L2 cache");
    d.group(tlb, "tlb", "address translation: the last-level TLB's reach and the cost of a miss");
    d.group(kernel, "kernel", "how kernels run: the fitted fractions and overheads, and the GEMM tiling choices");
    d.part<hbm::params>(hbm, "hbm", "hbm", "the device memory (see `tessel describe hbm`)");
    declare_energy(d, energy, energy_7nm::compute, "energy",
                   "energy per tensor-core MAC and per FP32-lane or SFU operation, and the static power of the chip "
                   "(the device memory declares its own)");
    declare_energy(d, l2_energy, energy_7nm::sram_mb, "l2_energy",
                   "energy per byte moved between the SMs and L2 (reads and writes are counted together: the read "
                   "figure is charged), and the L2's static power");
}

namespace {

std::vector<gpu::timing::tile> parse_tiles(const std::string& text, const std::string& who) {
    std::vector<gpu::timing::tile> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item.erase(std::remove_if(item.begin(), item.end(),
                                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                   item.end());
        const size_t x = item.find('x');
        int bm = 0, bn = 0;
        if (x != std::string::npos) {
            try {
                bm = std::stoi(item.substr(0, x));
                bn = std::stoi(item.substr(x + 1));
            } catch (...) {
                bm = bn = 0;
            }
        }
        if (bm <= 0 || bn <= 0)
            throw input_error(who + ": tile '" + item + "' is not BMxBN (e.g. 128x256) in '" + text + "'");
        out.push_back({bm, bn});
    }
    if (out.empty()) throw input_error(who + ": no tiles given");
    return out;
}

}  // namespace

double operand_alignment(std::int64_t elems, double eb) {
    const auto bytes = static_cast<std::int64_t>(static_cast<double>(elems) * eb);
    std::int64_t a = 16;
    while (a > 1 && bytes % a != 0) a /= 2;
    return static_cast<double>(a);
}

gpu::timing::timing(const params& prm, const std::string& who) : p(prm), clk(prm.clock.clock()) {
    tiles = parse_tiles(p.kernel.tiles, who + " kernel.tiles");
    const auto at = parse_tiles(p.kernel.attention_tile, who + " kernel.attention_tile");
    attn_bq = at.front().bm;
    attn_bkv = at.front().bn;
    const auto dt = parse_tiles(p.kernel.decode_tile, who + " kernel.decode_tile");
    decode_bq = dt.front().bm;
    decode_bkv = dt.front().bn;
    if (!(p.kernel.narrow_load >= 0)) throw input_error(who + ": kernel.narrow_load must not be negative");
    for (int k = 0; k < k_row_kernels; ++k)
        if (!(p.kernel.row_rate[k] >= 0))
            throw input_error(who + ": kernel.row_rate_" + row_kernel_word(static_cast<row_kernel>(k)) +
                              " must not be negative");
    if (!(p.kernel.attention_overlap >= 0 && p.kernel.attention_overlap <= 1))
        throw input_error(who + ": kernel.attention_overlap must be between 0 and 1");
    for (double e : {p.kernel.tensor_efficiency, p.kernel.simt_efficiency, p.kernel.l2_efficiency,
                     p.kernel.dram_efficiency, p.kernel.fallback_efficiency})
        if (!(e > 0 && e <= 1)) throw input_error(who + ": kernel efficiencies must be above 0 and at most 1");
}

double gpu::timing::tensor_peak(dtype t) const {
    return p.sm.tensor_macs_per_cycle.at(t) * static_cast<double>(p.sms) * clk.hz;
}
double gpu::timing::lane_peak() const { return static_cast<double>(p.sm.fp32_lanes * p.sms) * clk.hz; }
double gpu::timing::row_rate(row_kernel kind) const { return p.kernel.row_rate[static_cast<int>(kind)]; }

double gpu::timing::sfu_peak() const { return static_cast<double>(p.sm.sfu_lanes * p.sms) * clk.hz; }
double gpu::timing::l2_peak() const { return p.l2.bw.bytes_per_second(clk); }

gpu::kernel_plan gpu::timing::plan(const work& w, const kernel_desc* d) const {
    if (w.cls == op_class::attention && w.is_matmul()) return plan_attention(w, d);
    // A product with one row or one column is a matrix-vector product: the library runs it as a streaming kernel.
    if (w.is_matmul() && w.m > 1 && w.n > 1) return plan_gemm(w, !d || d->split_k);
    return plan_stream(w, d);
}

gpu::kernel_plan gpu::timing::plan_gemm(const work& w, bool may_split_k) const {
    const double eb = dtype_bits(w.type) / 8.0;
    const double sms = static_cast<double>(p.sms), hz = clk.hz;
    const double tensor_rate = p.sm.tensor_macs_per_cycle.at(w.type);
    const bool tensor = tensor_rate > 0;
    // Operands whose leading dimension (K of A, N of B and C) is not a multiple of 16 bytes cannot be moved by
    // TMA or 16-byte vector loads: the library falls back to kernels that load in the alignment's width.
    const double align = std::min(operand_alignment(w.k, eb), operand_alignment(w.n, eb));
    const bool fallback = tensor && align < 16;
    // MACs per second one SM sustains in a main loop.
    const double sm_rate =
        tensor ? tensor_rate * hz * (fallback ? p.kernel.fallback_efficiency : p.kernel.tensor_efficiency)
               : static_cast<double>(p.sm.fp32_lanes) * hz * p.kernel.simt_efficiency;
    const double narrow_bps = fallback && p.kernel.narrow_load > 0 ? p.kernel.narrow_load * align * hz : 0;
    const double smem_bps = p.sm.smem_bandwidth.bytes_per_second(clk);
    const double smem = static_cast<double>(p.sm.smem.bytes());
    const double l2_bps = l2_peak();
    const double M = static_cast<double>(w.m), N = static_cast<double>(w.n), K = static_cast<double>(w.k);
    const double batch = static_cast<double>(std::max<std::int64_t>(1, w.batch));
    const double bk = static_cast<double>(p.kernel.k_tile);
    const double a_bytes = batch * M * K * eb, b_bytes = batch * K * N * eb, c_bytes = batch * M * N * eb;
    const double l2_cap = static_cast<double>(p.l2.capacity.bytes());
    const double epilogue_ops = std::max(0.0, w.vector_ops);
    const double lanes_rate = static_cast<double>(p.sm.fp32_lanes) * hz * p.kernel.simt_efficiency;

    kernel_plan best;
    double best_score = -1;
    struct {
        double bm = 0, bn = 0;
        int split = 1;
        double ctas = 0, waves = 0, resident = 1;
        bool streamed = false;
    } chosen;
    const double k_tiles = std::max(1.0, ceil_div(K, bk));
    for (const tile& t : tiles) {
        const double bm = t.bm, bn = t.bn;
        const double stage = (bm + bn) * bk * eb;
        if (2 * stage > smem) continue;  // cannot double-buffer this tile
        const double ctas_per_sm = std::clamp(std::floor(smem / (2 * stage)), 1.0, static_cast<double>(p.sm.max_ctas));
        // Shared memory feeds the MMA: (bm + bn) bytes per K step serve bm x bn MACs.
        double sm_tile_rate = std::min(sm_rate, smem_bps * bm * bn / ((bm + bn) * eb));
        if (narrow_bps > 0) sm_tile_rate = std::min(sm_tile_rate, narrow_bps * bm * bn / ((bm + bn) * eb));
        const double tiles_mn = batch * ceil_div(M, bm) * ceil_div(N, bn);
        const int max_split =
            may_split_k ? static_cast<int>(std::min<double>(static_cast<double>(p.kernel.max_split_k), k_tiles)) : 1;
        for (int split = 1; split <= max_split; ++split) {
            const double kc = ceil_div(k_tiles, split) * bk;  // K per CTA, padded to whole K tiles
            const double ctas = tiles_mn * split;
            const double slots = sms * ctas_per_sm;
            // A persistent stream-K kernel spreads a partial last wave over every SM; other kernels run it whole.
            const bool streamed = p.kernel.stream_k && !fallback && split == 1 && ctas > slots;
            const double waves = streamed ? ctas / slots : ceil_div(ctas, slots);
            const double active = std::min(ctas, slots);
            // CTAs sharing one SM share its tensor cores and shared memory.
            const double resident = std::min(ctas_per_sm, ceil_div(ctas, sms));
            const double cta_rate = sm_tile_rate / resident;
            const double cluster =
                fallback ? 1.0 : std::min<double>(static_cast<double>(p.kernel.cluster), ceil_div(M, bm));
            const double cta_bytes = (bm + bn / cluster) * kc * eb;
            const double t_mma = bm * bn * kc / cta_rate;
            const double t_l2 = cta_bytes / (l2_bps / active);
            const double t_epi = epilogue_ops / ctas / (lanes_rate / resident);
            const double t_cta = std::max(t_mma, t_l2) + t_epi + p.kernel.cta_latency.q.value;
            double compute = waves * t_cta;
            double l2_bytes = ctas * cta_bytes + c_bytes;
            if (streamed && waves != std::floor(waves)) {
                // The tiles shared along K: each SM's FP32 partial tile goes through L2 and is added once.
                const double fixup = 2 * bm * bn * 4;
                compute += fixup / (l2_bps / active) + p.kernel.cta_latency.q.value;
                l2_bytes += slots * fixup;
            }
            double extra = 0;
            if (split > 1) {
                // Partial sums in FP32 go through L2 and a reduction kernel adds them.
                const double partial = split * batch * M * N * 4;
                l2_bytes += partial;
                extra = p.kernel.launch_overhead.q.value + (partial + c_bytes) / (l2_bps * p.kernel.l2_efficiency);
            }
            // Operands that do not fit in L2 are read again by every wave that needs them.
            double reread = 0;
            if (batch == 1 && a_bytes + b_bytes > l2_cap) {
                const double tiles_m = ceil_div(M, bm), tiles_n = ceil_div(N, bn);
                const double per_wave = std::max(1.0, std::min(tiles_m * tiles_n, std::floor(slots / split)));
                const double cols = std::min(tiles_n, std::max(1.0, std::round(std::sqrt(per_wave))));
                const double rows = std::min(tiles_m, ceil_div(per_wave, cols));
                const double waves_mn = ceil_div(tiles_m * tiles_n, per_wave);
                reread = std::max(0.0, waves_mn * (rows * bm + cols * bn) * K * eb - (a_bytes + b_bytes));
            }
            const double l2_time = l2_bytes / l2_bps;
            const double score = std::max(compute, l2_time) + extra;
            if (best_score < 0 || score < best_score * (1 - 1e-9)) {
                best_score = score;
                best = kernel_plan{};
                best.compute_s = compute;
                best.cache_bytes = l2_bytes;
                best.cache_s = l2_time;
                best.extra_s = extra;
                best.reread_bytes = reread;
                best.kernels = split > 1 ? 2 : 1;
                chosen = {bm, bn, split, ctas, waves, resident, streamed};
            }
        }
    }
    if (best_score < 0)
        throw input_error("gpu: no CTA tile of kernel.tiles fits two pipeline stages in " + format_bytes(smem) +
                          " of shared memory");
    // The text of the chosen candidate only (formatting every better candidate cost more than the search).
    std::ostringstream os;
    os << static_cast<int>(chosen.bm) << "x" << static_cast<int>(chosen.bn) << " tiles";
    if (chosen.split > 1) os << ", split-K " << chosen.split;
    os << ", " << static_cast<long long>(chosen.ctas) << " CTAs in " << format_number(chosen.waves, 3) << " wave"
       << (chosen.waves > 1 ? "s" : "") << (chosen.streamed ? " (stream-K)" : "") << " ("
       << format_number(100 * chosen.ctas / (chosen.waves * sms * chosen.resident), 3) << "% of SM time)";
    if (!tensor) os << ", FP32 lanes";
    if (fallback) os << ", fallback kernel (" << static_cast<int>(align) << "-byte aligned operands)";
    best.text = os.str();
    best.type = w.type;
    if (tensor)
        best.tensor_macs = w.macs;
    else
        best.lane_ops = w.macs;
    best.lane_ops += epilogue_ops;
    return best;
}

gpu::kernel_plan gpu::timing::plan_attention(const work& w, const kernel_desc* d) const {
    // Flash attention: one CTA per (batch, head, query block), looping over key blocks.
    const double eb = dtype_bits(w.type) / 8.0;
    const double hz = clk.hz;
    const std::int64_t heads = std::max<std::int64_t>(1, w.batch);
    const double sq = static_cast<double>(w.m), skv = static_cast<double>(w.n);
    // Fewer queries than a query block (decode): the library's decode kernel, with small query blocks and the
    // keys split over CTAs so that a few heads still fill the SMs.
    const bool decode = sq < attn_bq;
    const double bq = decode ? decode_bq : attn_bq, bkv = decode ? decode_bkv : attn_bkv;
    const double dqk = static_cast<double>(w.k) / 2, dv = static_cast<double>(w.k) - dqk;
    const bool causal = d && d->causal;
    const double tensor_rate = p.sm.tensor_macs_per_cycle.at(w.type);
    const double sm_rate = tensor_rate > 0 ? tensor_rate * hz * p.kernel.tensor_efficiency
                                           : static_cast<double>(p.sm.fp32_lanes) * hz * p.kernel.simt_efficiency;
    const double lanes_rate = static_cast<double>(p.sm.fp32_lanes) * hz * p.kernel.simt_efficiency;
    const double sfu_rate = static_cast<double>(p.sm.sfu_lanes) * hz;
    const double scores = static_cast<double>(heads) * sq * skv;
    const double vec_per_score = scores > 0 ? std::max(0.0, w.vector_ops) / scores : 0;
    // One key block: two products on the tensor cores and the online softmax (one exp per score); kernels that
    // run one block's softmax while the tensor cores multiply another hide attention_overlap of the shorter.
    const double mma_s = bq * bkv * (dqk + dv) / sm_rate;
    const double softmax_s = bq * bkv / sfu_rate + bq * bkv * vec_per_score / lanes_rate;
    const double block_s = std::max(mma_s, softmax_s) + (1 - p.kernel.attention_overlap) * std::min(mma_s, softmax_s);
    const std::int64_t q_blocks = static_cast<std::int64_t>(ceil_div(sq, bq));
    const std::int64_t kv_blocks = static_cast<std::int64_t>(ceil_div(skv, bkv));
    // Key blocks per query block (causal: up to the diagonal). The kernel launches the longest query blocks
    // first, so no long CTA starts last (FlashAttention-3's schedule for causal attention); the block scheduler
    // hands each CTA to the SM that frees first.
    std::vector<double> blocks(static_cast<size_t>(q_blocks));
    for (std::int64_t i = 0; i < q_blocks; ++i) {
        double n = static_cast<double>(kv_blocks);
        if (causal) {
            const double last_q = std::min(sq, static_cast<double>(i + 1) * bq) + (skv - sq);
            n = std::clamp(ceil_div(last_q, bkv), 1.0, static_cast<double>(kv_blocks));
        }
        blocks[static_cast<size_t>(i)] = n;
    }
    std::sort(blocks.begin(), blocks.end(), std::greater<double>());
    const double units = static_cast<double>(heads * q_blocks);
    const double splits =
        decode ? std::clamp(std::floor(static_cast<double>(p.sms) / units), 1.0, static_cast<double>(kv_blocks)) : 1.0;
    std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
    for (std::int64_t s = 0; s < p.sms; ++s) free_at.push(0.0);
    double makespan = 0, blocks_total = 0;
    for (double n : blocks)
        for (std::int64_t h = 0; h < heads; ++h)
            for (double part = 0; part < splits; ++part) {
                const double mine = std::max(0.0, std::min(ceil_div(n, splits), n - part * ceil_div(n, splits)));
                if (mine <= 0) continue;
                blocks_total += mine;
                const double t = free_at.top() + mine * block_s + p.kernel.cta_latency.q.value;
                free_at.pop();
                free_at.push(t);
                makespan = std::max(makespan, t);
            }
    kernel_plan pl;
    pl.type = w.type;
    pl.compute_s = makespan;
    const double ctas = units * splits;
    if (splits > 1) {
        // A second kernel adds the splits' partial outputs (FP32, with their softmax maxima and sums).
        pl.kernels = 2;
        pl.extra_s =
            p.kernel.launch_overhead.q.value + 2 * ctas * sq * (dv + 2) * 4 / (l2_peak() * p.kernel.l2_efficiency);
    }
    pl.cache_bytes = ctas * bq * (dqk + dv) * eb + blocks_total * bkv * (dqk + dv) * eb;
    pl.cache_s = pl.cache_bytes / l2_peak();
    const double done =
        std::min(1.0, blocks_total / (units * static_cast<double>(kv_blocks)));  // share of scores computed
    if (tensor_rate > 0)
        pl.tensor_macs = w.macs * done;
    else
        pl.lane_ops = w.macs * done;
    pl.lane_ops += w.vector_ops * done;
    pl.special_ops = blocks_total * bq * bkv;
    std::ostringstream os;
    os << (decode ? "decode attention, " : "flash attention, ") << static_cast<int>(bq) << "x" << static_cast<int>(bkv)
       << " blocks, " << static_cast<long long>(ctas) << " CTAs" << (causal ? ", causal" : "");
    if (splits > 1) os << ", keys split " << static_cast<long long>(splits) << " ways + combine kernel";
    pl.text = os.str();
    return pl;
}

gpu::kernel_plan gpu::timing::plan_stream(const work& w, const kernel_desc* d) const {
    kernel_plan pl;
    pl.type = w.type;
    const double sms = static_cast<double>(p.sms);
    pl.lane_ops = std::max(0.0, w.vector_ops) + std::max(0.0, w.macs);
    pl.special_ops = d ? d->special_ops : 0;
    pl.compute_s = pl.lane_ops / (lane_peak() * p.kernel.simt_efficiency) + pl.special_ops / sfu_peak();
    pl.cache_bytes = w.local_bytes();
    pl.cache_s = pl.cache_bytes / (l2_peak() * p.kernel.l2_efficiency);
    std::ostringstream os;
    if (d && d->rows > 0 && d->passes > 0) {
        const double eb = dtype_bits(w.type) / 8.0;
        const double rows = static_cast<double>(d->rows), cols = static_cast<double>(d->cols);
        // Each row is one CTA. Layer and RMS norm (ATen's vectorized_layer_norm_kernel): 128 threads loading 4
        // elements at a time. PyTorch's softmax: 1024 threads, or one warp of a 128-thread CTA for short rows.
        // Other reductions: threads loading vector_bytes each, as many as the row needs up to 1024. The SMs
        // hold as many rows as threads allow.
        const bool norm = is_norm_kernel(d->row_kind);
        const double per_thread = norm ? 4.0 : std::max(1.0, static_cast<double>(p.kernel.vector_bytes.bytes()) / eb);
        const bool vector = d->row_kind == row_kernel::vector;
        const double threads = norm                              ? 128.0
                               : d->row_kind == row_kernel::warp ? 32.0
                               : vector ? std::clamp(32 * ceil_div(ceil_div(cols, per_thread), 32), 32.0, 1024.0)
                                        : 1024.0;
        const double max_rows = d->row_kind == row_kernel::warp ? static_cast<double>(p.sm.max_ctas) * 4
                                                                : static_cast<double>(p.sm.max_ctas);
        const double rows_per_sm =
            std::clamp(std::floor(static_cast<double>(p.sm.max_threads) / threads), 1.0, max_rows);
        const double waves = ceil_div(rows, sms * rows_per_sm);
        // A vector kernel walks a row longer than one CTA's threads hold (1024 threads x vector_bytes) in
        // chunks, each one more dependent step of every pass; the softmax kernels' loops stream their chunks.
        const double chunks = vector ? ceil_div(cols, 1024 * per_thread) : 1.0;
        const double passes = static_cast<double>(d->passes) * chunks;
        // Each softmax kernel, and layer norm's Welford statistics, has its own sustained element rate (its
        // instruction stream: FP32 conversion, exponentials or divisions, block reductions); fitted per kernel.
        const double rate = row_rate(d->row_kind);
        if (rate > 0) pl.compute_s = std::max(pl.compute_s, rows * cols / (rate * sms * clk.hz));
        double loads = 0;
        if (norm) {
            // A norm kernel's thread keeps one load in flight and waits row_latency for it; rows follow one
            // another through an SM's row slots (max_threads / 128: 16 on Hopper and Ampere) without waves. By Little's
            // law an SM streams its resident rows' loads once per latency, so a pass costs (loads per thread, at least
            // one) latencies per round of resident rows; the DRAM traffic streams under it (few long rows are short of
            // loads in flight).
            loads = std::max(1.0, cols / (threads * per_thread));
            pl.row_s = static_cast<double>(d->passes) * loads * std::max(1.0, rows / (sms * rows_per_sm)) *
                       p.kernel.row_latency.q.value;
            pl.row_streams = true;
        } else {
            pl.row_s = waves * passes * p.kernel.row_latency.q.value;
        }
        if (d->rereads > 0) {
            // Rows read again come from L2 while the rows in flight (and their outputs) fit there; a wave
            // larger than that evicts each row before its next read, and the re-reads go to DRAM.
            const double in_flight =
                std::min(static_cast<double>(d->rows), sms * rows_per_sm) * static_cast<double>(d->cols) * eb;
            const double again = d->rereads * static_cast<double>(d->rows) * static_cast<double>(d->cols) * eb;
            if (2 * in_flight > static_cast<double>(p.l2.capacity.bytes())) {
                pl.reread_bytes = again;
            } else {
                pl.cache_bytes += again;
                pl.cache_s = pl.cache_bytes / (l2_peak() * p.kernel.l2_efficiency);
            }
        }
        os << "row-wise";
        if (*row_kernel_phrase(d->row_kind)) os << " (" << row_kernel_phrase(d->row_kind) << ")";
        os << ", " << d->rows << " rows of " << d->cols;
        if (norm) {
            os << ", " << rows_per_sm << " per SM, " << d->passes << " passes x " << loads << " load"
               << (loads != 1 ? "s" : "") << " a thread";
        } else {
            os << " in " << static_cast<long long>(waves) << " wave" << (waves > 1 ? "s" : "") << " x "
               << static_cast<long long>(passes) << " pass" << (passes > 1 ? "es" : "");
        }
        if (d->rereads > 0) os << ", rows re-read " << d->rereads << "x from " << (pl.reread_bytes > 0 ? "DRAM" : "L2");
    } else if (w.is_matmul()) {
        os << "matrix-vector (streaming)";
    } else {
        os << "streaming";
    }
    pl.text = os.str();
    return pl;
}

std::vector<stat_decl> gpu::stat_table() {
    return {
        {"kernels", "kernel", "kernels run"},
        {"flops", "FLOP", "floating-point operations of the kernels"},
        {"l2_hit_bytes", "B", "operand bytes found in L2"},
        {"l2_bytes", "B", "bytes between the SMs and L2"},
        {"launch_time", "s", "time spent in launch overheads"},
        {"tlb_misses", "page", "pages whose translation the TLB did not hold"},
        {"busy", "s", "time the GPU ran kernels"},
        {"l2_hit_rate", "1", "operand bytes found in L2 over operand bytes"},
    };
}

gpu::gpu(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_kernels(stats().scalar("kernels")),
      m_flops(stats().scalar("flops")),
      m_l2_hits(stats().scalar("l2_hit_bytes")),
      m_l2_bytes(stats().scalar("l2_bytes")),
      m_launch(stats().scalar("launch_time")),
      m_tlb_misses(stats().scalar("tlb_misses")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_timing = std::make_unique<timing>(m_p, "component '" + a.config_path + "' (gpu)");
    // The device memory: a part built from the `hbm:` map (an hbm unless its `kind:` says otherwise).
    m_hbm = make_part("hbm", m_p.hbm, a, role::memory);
    m_to_hbm.bind(m_hbm->in);
    try {
        m_l2 = block_cache(m_p.l2.capacity.bytes(), m_p.l2.block.bytes());
        m_tlb = extent_lru(m_p.tlb.reach.bytes(), m_p.tlb.page.bytes());
        m_l2.coalesce(m_hbm->takes_whole_streams());
    } catch (const input_error& e) {
        throw input_error("component '" + a.config_path + "' (gpu) l2 or tlb: " + e.message(), a.where);
    }
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_busy.busy); });
    stats().formula("l2_hit_rate", [this](double) { return m_l2_bytes > 0 ? m_l2_hits / m_l2_bytes : 0.0; });
}

double gpu::translate(const kernel_desc& d) {
    if (m_tlb.capacity() == 0) return 0;
    // Loads and stores translate alike: every page not held is one walk.
    std::uint64_t walks = 0;
    for (const auto& o : d.operands) walks += m_tlb.touch(o.address, o.bytes);
    return static_cast<double>(walks);
}

void gpu::warm(const kernel_desc& d) {
    m_dram.clear();
    for (const auto& o : d.operands)
        if (!o.write) m_l2.read(o.address, o.bytes, m_dram);
    for (const auto& o : d.operands)
        if (o.write) m_l2.write(o.address, o.bytes, m_dram);
    translate(d);
}

namespace {
bool same_work(const work& a, const work& b) {
    static_assert(sizeof(work) == 80, "same_work compares every field of work: add the new one");
    return a.macs == b.macs && a.vector_ops == b.vector_ops && a.bytes_in == b.bytes_in &&
           a.bytes_weight == b.bytes_weight && a.bytes_out == b.bytes_out && a.type == b.type && a.cls == b.cls &&
           a.batch == b.batch && a.m == b.m && a.n == b.n && a.k == b.k;
}
}  // namespace

const gpu::kernel_plan& gpu::plan_of(const work& w, const kernel_desc* d) {
    planned& e = m_plans[&w];
    const bool same = e.made && same_work(e.w, w) && e.has_desc == (d != nullptr) &&
                      (!d || (e.causal == d->causal && e.rows == d->rows && e.cols == d->cols &&
                              e.passes == d->passes && e.rereads == d->rereads && e.row_kind == d->row_kind &&
                              e.split_k == d->split_k && e.special_ops == d->special_ops));
    if (!same) {
        e.plan = m_timing->plan(w, d);
        e.made = true;
        e.w = w;
        e.has_desc = d != nullptr;
        if (d) {
            e.causal = d->causal;
            e.rows = d->rows;
            e.cols = d->cols;
            e.passes = d->passes;
            e.rereads = d->rereads;
            e.row_kind = d->row_kind;
            e.split_k = d->split_k;
            e.special_ops = d->special_ops;
        }
    }
    return e.plan;
}

void gpu::transport(txn& t) {
    if (t.kind != txn_kind::compute || !t.w) {
        // A plain read or write goes to the device memory.
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_generic_payload gp;
        gp.set_extension(&t);
        m_to_hbm->b_transport(gp, delay);
        gp.clear_extension(&t);
        return;
    }
    const work& w = *t.w;
    const kernel_desc* d = payload_as<kernel_desc>(t.payload);
    const timing& tm = *m_timing;
    if (w.macs > 0 && w.is_matmul() && tm.p.sm.tensor_macs_per_cycle.at(w.type) <= 0 && w.type != dtype::fp32 &&
        w.type != dtype::int32)
        throw input_error(path() + " has no tensor-core rate for " + std::string(dtype_name(w.type)) +
                          " (sm.tensor_macs_per_cycle)");
    const kernel_plan& pl = plan_of(w, d);

    const tick start = std::max(t.head, m_busy.free_at);
    const double launch = tm.p.kernel.launch_overhead.q.value;
    const tick t0 = start + seconds_to_ticks(launch);
    // L2: operands found on chip, misses and write-backs for DRAM.
    m_dram.clear();
    double hits = 0, operand_bytes = 0;
    if (d && !d->operands.empty()) {
        for (size_t i = 0; i < d->operands.size(); ++i) {
            const kernel_operand& o = d->operands[i];
            if (o.write) continue;
            operand_bytes += o.bytes;
            // The same tensor read twice (x * x, addcmul_(v, g, g)): each thread loads both from the same line,
            // so the second read is an L1/L2 hit whatever the tensor's size.
            const bool again = std::any_of(
                d->operands.begin(), d->operands.begin() + static_cast<std::ptrdiff_t>(i),
                [&](const kernel_operand& e) { return !e.write && e.address == o.address && e.bytes == o.bytes; });
            hits += again ? o.bytes : m_l2.read(o.address, o.bytes, m_dram);
        }
        if (pl.reread_bytes > 0) {
            // Re-reads of the largest input, from its start.
            const kernel_operand* big = nullptr;
            for (const auto& o : d->operands)
                if (!o.write && (!big || o.bytes > big->bytes)) big = &o;
            if (big) m_dram.push_back({big->address, pl.reread_bytes, false});
        }
        for (const auto& o : d->operands)
            if (o.write) m_l2.write(o.address, o.bytes, m_dram);
    } else {
        // No descriptor: operands come from DRAM and results go back to it.
        const double in_bytes = w.bytes_in + w.bytes_weight + pl.reread_bytes;
        if (in_bytes > 0) m_dram.push_back({0, in_bytes, false});
        if (w.bytes_out > 0) m_dram.push_back({0, w.bytes_out, true});
        operand_bytes = w.bytes_in + w.bytes_weight;
    }
    const double dram_rate = m_hbm->peak_bytes_per_second() * tm.p.kernel.dram_efficiency;
    const dram_stream_result dr =
        stream_to_memory(*m_to_hbm.operator->(), m_payload, m_dram, t0, dram_rate, tm.p.kernel.segment.bytes(), t.op,
                         t.step, m_hbm->takes_whole_streams());
    const double walks = d ? translate(*d) : 0;
    const double dram_s = ticks_to_seconds(dr.last - t0) + walks * tm.p.tlb.miss_cost.q.value;
    // A row-wise kernel's waves wait on their reductions: each dependent pass adds its latency to the
    // streaming of the wave's bytes (a norm kernel's row time is its streaming, which DRAM time bounds).
    const double rows_s = pl.row_streams ? std::max(dram_s, pl.row_s) : dram_s + pl.row_s;
    const double body = std::max({pl.compute_s, pl.cache_s, rows_s});
    const tick end = t0 + seconds_to_ticks(body + pl.extra_s);

    m_busy.free_at = end;
    m_busy.busy += end - start;
    t.head = start;
    t.tail = end;
    sim().trace.slice(m_track, start, end, t.op, t.step);

    const double flops = w.flops();
    m_kernels += pl.kernels;
    m_flops += flops;
    m_l2_hits += hits;
    m_l2_bytes += operand_bytes;
    m_launch += launch * pl.kernels;
    m_tlb_misses += walks;
    if (pl.tensor_macs > 0) {
        m_tensor_macs[static_cast<size_t>(pl.type)] += pl.tensor_macs;
        m_tensor_ideal += pl.tensor_macs / tm.tensor_peak(pl.type);
    }
    m_lane_ops += pl.lane_ops;
    m_special += pl.special_ops;
    m_cache_bytes += pl.cache_bytes;
    // Busy time is work at the pipes' sustained rates: a kernel's fixed CTA latency and the idle SMs of its last
    // wave are part of its length (compute_s) but not of its tensor cores' work.
    if (pl.tensor_macs > 0)
        m_tensor_busy += std::min(body, pl.tensor_macs / (tm.tensor_peak(pl.type) * tm.p.kernel.tensor_efficiency));
    m_lane_busy +=
        std::min(body, pl.lane_ops / (tm.lane_peak() * tm.p.kernel.simt_efficiency) + pl.special_ops / tm.sfu_peak());
    m_l2_busy += std::min(pl.cache_s, body);
    spend(t, energy_part::compute,
          m_p.energy.joules(pl.type, pl.tensor_macs, pl.lane_ops + pl.special_ops, name()) +
              m_p.energy.busy_joules(ticks_to_seconds(end - start)),
          start, end);
    spend(t, energy_part::sram, pl.cache_bytes * m_p.l2_energy.read.joules(), start, end);

    if (!keeps_records()) return;
    kernel_record r;
    r.step = t.step;
    r.op = t.op;
    r.start = start;
    r.end = end;
    r.plan = pl.text;
    r.compute_s = pl.compute_s;
    r.cache_s = pl.cache_s;
    r.dram_s = dram_s;
    r.overhead_s = launch * pl.kernels;
    r.flops = flops;
    r.cache_bytes = pl.cache_bytes;
    r.hit_bytes = hits;
    r.dram_bytes = dr.read_bytes + dr.write_bytes;
    const double worst = body;
    if (launch > body)
        r.bound = "overhead";
    else if (worst == rows_s)
        r.bound = pl.row_s > dram_s ? "latency" : "dram";
    else if (worst == pl.compute_s)
        r.bound = "compute";
    else if (worst == pl.cache_s)
        r.bound = "cache";
    else
        r.bound = "latency";
    m_records.push_back(std::move(r));
}

void gpu::usage(std::vector<resource_usage>& out) const {
    const timing& tm = *m_timing;
    {
        resource_usage u;
        u.name = path() + ".tensor";
        u.kind = kind_name();
        u.cls = resource_class::compute;
        size_t best = static_cast<size_t>(dtype::bf16);
        for (size_t i = 0; i < m_tensor_macs.size(); ++i)
            if (m_tensor_macs[i] > m_tensor_macs[best]) best = i;
        double macs = 0;
        for (double m : m_tensor_macs) macs += m;
        u.work = 2 * macs;
        u.work_unit = "FLOP";
        u.peak_rate = 2 * tm.tensor_peak(static_cast<dtype>(best));
        u.ideal_seconds = m_tensor_ideal;
        u.ideal_max = m_tensor_ideal;
        u.busy_seconds = m_tensor_busy;
        u.busy_max = m_tensor_busy;
        // Active power over the kernels' residency: the chip clocks while any kernel runs.
        charge(u, m_p.energy.joules(m_tensor_macs, 0, path()) + m_p.energy.busy_joules(ticks_to_seconds(m_busy.busy)),
               m_p.energy.leakage.watts());
        out.push_back(u);
    }
    {
        resource_usage u;
        u.name = path() + ".fp32";
        u.kind = kind_name();
        u.cls = resource_class::compute;
        u.work = m_lane_ops;
        u.work_unit = "op";
        u.peak_rate = tm.lane_peak();
        u.ideal_seconds = m_lane_ops / tm.lane_peak();
        u.ideal_max = u.ideal_seconds;
        u.busy_seconds = m_lane_busy;
        u.busy_max = m_lane_busy;
        charge(u, (m_lane_ops + m_special) * m_p.energy.op.joules(), 0.0);
        out.push_back(u);
    }
    {
        resource_usage u;
        u.name = path() + ".l2";
        u.kind = kind_name();
        u.cls = resource_class::memory;
        u.work = m_cache_bytes;
        u.work_unit = "B";
        u.peak_rate = tm.l2_peak();
        u.ideal_seconds = m_cache_bytes / tm.l2_peak();
        u.ideal_max = u.ideal_seconds;
        u.busy_seconds = m_l2_busy;
        u.busy_max = m_l2_busy;
        charge(u, m_cache_bytes * m_p.l2_energy.read.joules(), m_p.l2_energy.leakage.watts());
        out.push_back(u);
    }
}

std::vector<tunable> gpu::tunables() {
    auto& k = m_timing->p.kernel;
    auto time_param = [](duration& d) {
        return std::make_pair(std::function<double()>([&d] { return d.q.value; }),
                              std::function<void(double)>([&d](double v) {
                                  d.q = quantity{v, dimension::time};
                              }));
    };
    auto frac = [](double& f) {
        return std::make_pair(std::function<double()>([&f] { return f; }),
                              std::function<void(double)>([&f](double v) { f = v; }));
    };
    std::vector<tunable> out;
    auto add = [&](std::string name, std::string unit, double lo, double hi, bool log, std::string affects,
                   std::pair<std::function<double()>, std::function<void(double)>> gs) {
        // A new value changes every plan: the reused ones go.
        auto set = [this, set = gs.second](double v) {
            set(v);
            m_plans.clear();
        };
        out.push_back(tunable{std::move(name), std::move(unit), lo, hi, log, std::move(affects), gs.first, set});
    };
    add("kernel.launch_overhead", "s", 0.2e-6, 6e-6, true, "all", time_param(k.launch_overhead));
    add("kernel.l2_efficiency", "", 0.2, 1.0, false, "stream", frac(k.l2_efficiency));
    add("kernel.dram_efficiency", "", 0.5, 1.0, false, "stream", frac(k.dram_efficiency));
    add("kernel.row_latency", "s", 0.05e-6, 10e-6, true, "rowwise", time_param(k.row_latency));
    add("kernel.tensor_efficiency", "", 0.3, 1.0, false, "gemm", frac(k.tensor_efficiency));
    add("kernel.simt_efficiency", "", 0.3, 1.0, false, "gemm", frac(k.simt_efficiency));
    add("kernel.cta_latency", "s", 0.02e-6, 5e-6, true, "gemm", time_param(k.cta_latency));
    add("kernel.fallback_efficiency", "", 0.05, 1.0, false, "gemm", frac(k.fallback_efficiency));
    add("kernel.attention_overlap", "", 0.0, 1.0, false, "attention", frac(k.attention_overlap));
    add("kernel.narrow_load", "B/cycle", 0.5, 64, true, "gemm", frac(k.narrow_load));
    for (const auto& rate : k_row_rates)
        add(std::string("kernel.row_rate_") + row_kernel_word(rate.first), "el/cycle", 0.25, 16, true, "rowwise",
            frac(k.row_rate[static_cast<int>(rate.first)]));
    if (m_timing->p.tlb.reach.bytes() > 0)
        add("tlb.miss_cost", "s", 1e-9, 2e-6, true, "stream", time_param(m_timing->p.tlb.miss_cost));
    return out;
}

std::string gpu::summary() const {
    const timing& tm = *m_timing;
    std::ostringstream os;
    os << "GPU " << path() << ": " << m_p.sms << " SMs at " << format_quantity(m_p.clock.q) << ", "
       << format_rate(2 * tm.tensor_peak(dtype::bf16), "FLOP/s") << " bf16 tensor, "
       << format_rate(2 * tm.lane_peak(), "FLOP/s") << " fp32, L2 " << format_bytes(cache_capacity()) << ", DRAM "
       << format_rate(m_hbm->peak_bytes_per_second(), "B/s");
    return os.str();
}

TESSEL_REGISTER_KIND(make_kind<gpu>(
    "gpu", "composite",
    "GPU running kernel after kernel: SMs with tensor cores, FP32 lanes and shared memory; CTA tiling with wave "
    "quantisation, split-K and L2 reuse; flash attention; streaming and row-wise kernels; L2 kept between "
    "kernels (LRU, write-back); device memory as a part (an hbm unless `hbm.kind` names another); fixed launch "
    "overhead"));

}  // namespace tessel
