#include "engine/serve/serve_options.h"

#include <cmath>
#include <functional>

#include "models/core/error.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel::serve {

const std::vector<serve_setting>& serve_settings() {
    // Server defaults follow vLLM's (block_size 16, gpu_memory_utilization 0.9, max_num_batched_tokens 8192 with
    // chunked prefill off); max_batch is lower than vLLM's 256 so a default run simulates few step shapes.
    static const std::vector<serve_setting> s = {
        {"rate", "1", "Poisson arrivals: requests per second (used unless trace or concurrency is set)"},
        {"concurrency", "0",
         "closed loop: this many users, each sending its next request when its last one finishes (0: off)"},
        {"trace", "", "CSV file of requests: a header, then arrival_s,prompt_tokens,output_tokens per line"},
        {"requests", "100",
         "requests to serve, at most 1,000,000 (Poisson and closed loop; a trace serves every line)"},
        {"prompt_tokens", "512", "prompt length of every request (Poisson and closed loop)"},
        {"output_tokens", "128", "tokens generated per request, the first by its prefill (Poisson and closed loop)"},
        {"seed", "1", "seed of the Poisson arrivals (runs with the same seed are identical)"},
        {"scheduler", "continuous",
         "continuous (iteration-level batching: requests join and leave between steps, KV blocks admit them, the "
         "newest is preempted when blocks run out; vLLM), chunked (continuous with chunked prefill: each step "
         "takes its decodes and then prompt chunks up to serve.chunk tokens; Sarathi-Serve) or static (a batch is "
         "formed when the server is idle and decodes until its longest request ends)"},
        {"max_batch", "32", "most sequences in one step"},
        {"max_prefill_tokens", "8192", "most tokens (batch x longest prompt) in one prefill step"},
        {"chunk", "512",
         "chunked scheduler: tokens per step, one per decoding sequence and the rest prompt chunks (vLLM's "
         "max_num_batched_tokens with chunked prefill, 512 by default there; Sarathi-Serve's token budget); at "
         "least max_batch"},
        {"block_tokens", "16", "tokens per KV-cache block (vLLM's PagedAttention page)"},
        {"memory_utilization", "0.9",
         "share of each chip's memory for weights and the KV cache; the rest is left to activations and "
         "workspace (vLLM's gpu_memory_utilization)"},
        {"prefill_replicas", "0",
         "disaggregated serving (Splitwise, DistServe): this many of a system's replicas only prefill and send "
         "each prompt's KV cache over the system's links to the other replicas, which only decode (0: every "
         "replica does both)"},
        {"speculate", "0",
         "speculative decoding (Leviathan et al. 2023; vLLM): the draft model proposes this many tokens per "
         "sequence a step, one decode step of the draft each, and the model verifies them in one step over the "
         "cache; each sequence keeps the accepted ones and one more (0: off)"},
        {"draft", "", "speculative decoding: the draft model (a workload: -w's names or a file, e.g. llama3.2-1b)"},
        {"acceptance", "0.7",
         "speculative decoding: the chance that the model accepts each draft token, independently (an assumption "
         "to vary: it depends on the draft, the model and the text)"},
        {"simulated_layers", "0",
         "layers a pipeline stage is simulated with (0: the model's own): each step is simulated with N and N+1 "
         "layers a stage, and each further layer adds their difference (the layers are alike); for steps too large "
         "to simulate whole"},
        {"slo_ttft", "0", "time-to-first-token objective, e.g. 500ms (0: none); goodput counts requests meeting it"},
        {"slo_tpot", "0", "time-per-output-token objective, e.g. 50ms (0: none)"},
    };
    return s;
}

namespace {

// More requests than this would take longer to serve than any question needs.
constexpr std::int64_t k_max_requests = 1'000'000;

std::int64_t whole(const std::string& key, const std::string& v, std::int64_t least) {
    std::size_t used = 0;
    long long n = 0;
    try {
        n = std::stoll(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty()) throw input_error("serve." + key + ": expected a whole number, got '" + v + "'");
    if (n < least || n > (std::int64_t{1} << 40))
        throw input_error("serve." + key + ": " + v + " is out of range (" + std::to_string(least) + " to 2^40)");
    return n;
}

double real(const std::string& key, const std::string& v, double lo, double hi) {
    std::size_t used = 0;
    double x = 0;
    try {
        x = std::stod(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || !std::isfinite(x))
        throw input_error("serve." + key + ": expected a number, got '" + v + "'");
    if (x < lo || x > hi)
        throw input_error("serve." + key + ": " + v + " is out of range (" + format_number(lo) + " to " +
                          format_number(hi) + ")");
    return x;
}

double seconds(const std::string& key, const std::string& v) {
    if (v == "0") return 0;
    const quantity q = parse_quantity(v, "serve." + key, {});
    if (q.dim != dimension::time || !(q.value > 0) || !std::isfinite(q.value))
        throw input_error("serve." + key + ": expected a positive time such as 200ms, got '" + v + "'");
    return q.value;
}

}  // namespace

serve_options parse_serve_options(const std::map<std::string, std::string>& sets) {
    serve_options o;
    std::vector<std::string> keys;
    for (const auto& s : serve_settings()) keys.push_back(s.key);
    const std::map<std::string, std::function<void(const std::string&, const std::string&)>> readers = {
        {"rate", [&](auto& k, auto& v) { o.rate = real(k, v, 1e-9, 1e9); }},
        {"concurrency", [&](auto& k, auto& v) { o.concurrency = whole(k, v, 0); }},
        {"trace", [&](auto&, auto& v) { o.trace = v; }},
        {"requests",
         [&](auto& k, auto& v) {
             o.requests = whole(k, v, 1);
             if (o.requests > k_max_requests)
                 throw input_error("serve." + k + ": " + v + " is more than " + std::to_string(k_max_requests) +
                                   " requests");
         }},
        {"prompt_tokens", [&](auto& k, auto& v) { o.prompt_tokens = whole(k, v, 1); }},
        {"output_tokens", [&](auto& k, auto& v) { o.output_tokens = whole(k, v, 1); }},
        {"seed", [&](auto& k, auto& v) { o.seed = static_cast<std::uint64_t>(whole(k, v, 0)); }},
        {"scheduler",
         [&](auto& k, auto& v) {
             if (v != "continuous" && v != "chunked" && v != "static")
                 throw input_error("serve." + k + ": '" + v + "' is not a scheduler (continuous, chunked or static)");
             o.scheduler = v;
         }},
        {"max_batch", [&](auto& k, auto& v) { o.max_batch = whole(k, v, 1); }},
        {"max_prefill_tokens", [&](auto& k, auto& v) { o.max_prefill_tokens = whole(k, v, 1); }},
        {"chunk", [&](auto& k, auto& v) { o.chunk = whole(k, v, 1); }},
        {"block_tokens", [&](auto& k, auto& v) { o.block_tokens = whole(k, v, 1); }},
        {"memory_utilization", [&](auto& k, auto& v) { o.memory_utilization = real(k, v, 0.01, 1); }},
        {"prefill_replicas", [&](auto& k, auto& v) { o.prefill_replicas = whole(k, v, 0); }},
        {"speculate", [&](auto& k, auto& v) { o.speculate = whole(k, v, 0); }},
        {"draft", [&](auto&, auto& v) { o.draft = v; }},
        {"acceptance", [&](auto& k, auto& v) { o.acceptance = real(k, v, 0, 1); }},
        {"simulated_layers", [&](auto& k, auto& v) { o.simulated_layers = whole(k, v, 0); }},
        {"slo_ttft", [&](auto& k, auto& v) { o.slo_ttft_s = seconds(k, v); }},
        {"slo_tpot", [&](auto& k, auto& v) { o.slo_tpot_s = seconds(k, v); }},
    };
    for (const auto& s : serve_settings())
        if (!s.default_value.empty()) readers.at(s.key)(s.key, s.default_value);
    for (const auto& [k, v] : sets) {
        const auto it = readers.find(k);
        if (it == readers.end())
            throw input_error("--set serve." + k + ": no such serving setting" + did_you_mean(k, keys) +
                              " (tessel serve --help lists them)");
        it->second(k, v);
    }
    if (!o.trace.empty() && o.concurrency > 0)
        throw input_error("serve.trace and serve.concurrency both set how requests arrive; give one");
    if (o.scheduler == "chunked" && o.chunk < o.max_batch)
        throw input_error("serve.chunk: " + std::to_string(o.chunk) +
                          " tokens a step cannot hold a token for each of "
                          "serve.max_batch (" +
                          std::to_string(o.max_batch) + ") decoding sequences; give a chunk of at least max_batch");
    if (o.prefill_replicas > 0 && o.scheduler != "continuous")
        throw input_error(
            "serve.prefill_replicas: disaggregated serving schedules each pool continuously; leave "
            "serve.scheduler at continuous");
    if (o.speculate > 0 && o.draft.empty())
        throw input_error("serve.speculate: speculative decoding needs a draft model (serve.draft=llama3.2-1b)");
    if (o.speculate > 64)
        throw input_error("serve.speculate: " + std::to_string(o.speculate) +
                          " draft tokens a step is more than speculative decoding uses (at most 64)");
    if (o.speculate > 0 && (o.scheduler != "continuous" || o.prefill_replicas > 0))
        throw input_error(
            "serve.speculate: speculative decoding runs with the continuous scheduler on replicas that prefill and "
            "decode (not with serve.scheduler=" +
            o.scheduler + (o.prefill_replicas > 0 ? " or serve.prefill_replicas" : "") + ")");
    if (o.speculate == 0 && !o.draft.empty())
        throw input_error("serve.draft: a draft model is used only with serve.speculate=K (draft tokens a step)");
    return o;
}

}  // namespace tessel::serve
