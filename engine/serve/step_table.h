// The time and energy of a batch step, from steps simulated on the chip or system model.
//
// A serving run takes thousands of batch steps, most of them of a few shapes. The shapes on a grid are simulated,
// each once, as `tessel run`s of the workload (prefill: `batch` prompts of `seq` tokens; decode: `batch`
// sequences of one new token over `kv_cache` cached ones). A step between grid points is interpolated by a stated
// rule: within one batch size, piecewise linear in the length (exact at the grid's lengths), then linear between
// the two nearest batch sizes simulated (exact at them). Beyond the longest length simulated at a batch size the
// line through its last two points continues. Against direct simulation of Llama-3-8B on an H100 (2026-12-03):
// decode steps at batch 3 and 12 from 2, 4, 8 and 16 were +0.33% and +0.41% off, a 384-token prefill from 256 and
// 512 -2.6%; tests/serve/serve_cli_test.cpp holds the rule to 1% and 5% on a 2-layer cut of the model. A prompt
// length on the grid (every prompt is, when serve.prompt_tokens fixes it) is exact.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace tessel::serve {

/// A step shape: prefill (`batch` prompts padded to `length` tokens, over `prefix` tokens already cached each) or
/// decode (`batch` sequences, `length` tokens already cached each). A prefill may carry `decodes` sequences decoding
/// one token each over `decode_context` cached ones in the same step (chunked prefill's mixed step).
struct step_shape {
    bool prefill = false;
    std::int64_t batch = 1, length = 1;
    std::int64_t prefix = 0;
    std::int64_t decodes = 0, decode_context = 0;

    bool mixed() const { return decodes > 0; }
    bool operator<(const step_shape& o) const {
        return std::tie(prefill, batch, length, prefix, decodes, decode_context) <
               std::tie(o.prefill, o.batch, o.length, o.prefix, o.decodes, o.decode_context);
    }
    bool operator==(const step_shape& o) const { return !(*this < o) && !(o < *this); }
};

struct step_cost {
    double seconds = 0, joules = 0;
};

/// What the grid must cover.
struct grid_bounds {
    std::int64_t max_batch = 1;           // most sequences in a decode step
    std::int64_t max_prefill_batch = 1;   // most prompts in a prefill step
    std::int64_t max_prefill_tokens = 1;  // most padded tokens in a prefill step (one prompt may exceed it)
    std::int64_t prompt_min = 1, prompt_max = 1;
    std::int64_t reprefill_max = 0;                 // longest prompt + output re-prefilled after a preemption (0: none)
    std::int64_t context_min = 0, context_max = 0;  // decode: tokens cached before a step (max 0: no decode)
    std::int64_t kv_tokens = 0;                     // KV-cache capacity in tokens: a decode batch never holds more
    std::int64_t chunk = 0;      // chunked prefill: tokens per step (> 0: mixed steps instead of whole prefills)
    std::int64_t speculate = 0;  // speculative decoding: draft tokens per sequence a step (> 0: verify steps too)
};

/// 1, 2, 4, ... below `n`, then `n`.
std::vector<std::int64_t> batch_grid(std::int64_t n);

/// The shapes to simulate (sorted, each once). With chunked prefill: the decode steps, and instead of whole
/// prefills the mixed steps of the rule below.
std::vector<step_shape> step_grid(const grid_bounds& b);

class step_table {
public:
    void add(const step_shape& s, const step_cost& c) { m_points[s] = c; }
    bool empty() const { return m_points.empty(); }
    const std::map<step_shape, step_cost>& points() const { return m_points; }

    /// A step's cost by the rule above; a shape on the grid is its simulated cost exactly.
    step_cost prefill(std::int64_t batch, double length) const { return lookup(true, batch, length); }
    step_cost decode(std::int64_t batch, double context) const { return lookup(false, batch, context); }
    /// Speculative decoding's verify step: `batch` sequences of `tokens` (the draft's and one more) over `context`
    /// cached tokens each (mean); by the decode rule, the verify steps simulated at each batch size taking the
    /// decode steps' place.
    step_cost verify(std::int64_t batch, std::int64_t tokens, double context) const;

    /// A chunked-prefill step: `chunk` prompt tokens (one sequence's chunk, or several sequences' chunks taken as
    /// one) over `prefix` cached tokens (token-weighted mean), beside `decodes` sequences decoding over `context`
    /// cached tokens (mean). The rule: the mixed steps simulated at the grid's reference contexts (prefix 0, the
    /// decodes over the shortest context), linear in the step's tokens (chunk + decodes) within a decode count and
    /// linear between decode counts; plus the decodes' own context beyond the reference, as the decode steps
    /// simulated at both contexts give it; plus the prefix, linear between prefix 0 and the longest prefix
    /// simulated at that chunk size. The two corrections are exact where the decodes' and the chunk's attention
    /// run as kernels of their own, one after another (GPUs, TPUs). Several sequences' chunks in one step are
    /// taken as one chunk of their tokens over their mean prefix (the same linear layers; attention's part that
    /// grows with the square of a chunk is overcounted). Against direct simulation of Llama-3-8B on an H100
    /// (2026-12-05), five steps off the grid of every direction were -0.13% to +3.8% off;
    /// tests/serve/serve_cli_test.cpp holds them to 5% on a 2-layer cut.
    step_cost mixed(std::int64_t decodes, double context, std::int64_t chunk, double prefix) const;

private:
    step_cost lookup(bool prefill, std::int64_t batch, double length) const;
    /// The mixed steps at the reference contexts: decode count `decodes`, `tokens` in all.
    step_cost mixed_at_reference(std::int64_t decodes, double tokens) const;
    std::map<step_shape, step_cost> m_points;
};

/// The time to send one request's KV cache from a prefill replica to a decode replica, by its tokens. Simulated
/// at a few lengths (a program with one transfer per chip, from each chip of the prefill replica to the chip of the
/// decode replica that holds the same layers and heads, all at once, over the system's links); piecewise linear
/// between them, and along the last two beyond. A lone transfer takes its latency plus its bytes over the path's
/// bandwidth, linear in the bytes: tests/serve/serve_cli_test.cpp checks a length between against a direct run.
class transfer_table {
public:
    void add(std::int64_t tokens, double seconds) { m_points[tokens] = seconds; }
    bool empty() const { return m_points.empty(); }
    const std::map<std::int64_t, double>& points() const { return m_points; }
    double seconds(std::int64_t tokens) const;

private:
    std::map<std::int64_t, double> m_points;
};

}  // namespace tessel::serve
