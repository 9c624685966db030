// The serving settings (`--set serve.KEY=VALUE`): how requests arrive, how long they are, how the server batches
// them and the latency targets they are judged by. Each is declared once, with its default and meaning, in
// serve_options.cpp; `tessel serve --help` lists them from there, and a test holds docs/serving.md's table to it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::serve {

struct serve_setting {
    std::string key, default_value, doc;
};

/// Every serve.* key with its default and meaning, in the order the docs list them.
const std::vector<serve_setting>& serve_settings();

struct serve_options {
    // Arrivals: a trace file, else a closed loop of `concurrency` users, else a Poisson process at `rate`.
    // (Defaults: serve_settings(), applied by parse_serve_options.)
    std::string trace;  // CSV: arrival_s,prompt_tokens,output_tokens
    std::int64_t concurrency = 0;
    double rate = 0;  // requests per second
    std::int64_t requests = 0;
    std::int64_t prompt_tokens = 0, output_tokens = 0;
    std::uint64_t seed = 0;
    // The server.
    std::string scheduler;       // continuous (iteration-level, vLLM), chunked (with chunked prefill) or static
    std::int64_t max_batch = 0;  // sequences decoded at once
    std::int64_t max_prefill_tokens = 0;  // tokens (padded) one prefill step may take
    std::int64_t chunk = 0;               // chunked: tokens per step
    std::int64_t block_tokens = 0;        // KV-cache block (PagedAttention page)
    double memory_utilization = 0;        // share of chip memory for weights + KV cache
    std::int64_t prefill_replicas = 0;    // > 0: that many replicas only prefill, the rest only decode
    // Speculative decoding (speculate 0: off).
    std::int64_t speculate = 0;  // draft tokens per sequence a step
    std::string draft;           // the draft model (a workload)
    double acceptance = 0;       // chance each draft token is accepted
    // Layers a pipeline stage is simulated with (0: all); the rest added at one layer's time.
    std::int64_t simulated_layers = 0;
    // Service-level objectives (0: none).
    double slo_ttft_s = 0, slo_tpot_s = 0;

    std::string arrival() const { return !trace.empty() ? "trace" : concurrency > 0 ? "closed" : "poisson"; }
};

/// The defaults, then `serve.KEY=VALUE` pairs (KEY without the prefix) over them; an unknown key, a bad number or unit,
/// or a value out of range is an input_error naming the key.
serve_options parse_serve_options(const std::map<std::string, std::string>& sets);

}  // namespace tessel::serve
