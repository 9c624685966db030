// The server: batch steps over time for a stream of requests, under a batching policy, with the KV cache held in
// blocks (PagedAttention). Each step's time and energy come from the step table (simulated steps).
//
// continuous (iteration-level batching, Orca; vLLM's scheduler without chunked prefill): before every step the
//   server admits waiting requests first come first served while the batch has room (serve.max_batch), the prefill
//   token budget holds (admitted prompts x the longest, padded) and the KV cache has blocks for each prompt; if it
//   admitted any, the step is their prefill (the running requests wait, as vLLM runs prefills first), which gives
//   each its first token. Otherwise every running request decodes one token. A decode step that needs a block
//   the cache does not have takes back the blocks of the most recently admitted request (preemption by
//   recomputation): it goes to the front of the queue and is prefilled again over its prompt and the tokens it
//   had, which also gives its next token.
// static: when the server is idle it takes up to max_batch waiting requests (as many as the KV cache holds at
//   their full length), prefills them padded to the longest prompt, and decodes the whole batch until its
//   longest output is done; a request's last token ends it, but its slot stays in the batch.
//
// Replicas (parallel.dp) serve independently; requests go to them in turn as they arrive.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/serve/request.h"
#include "engine/serve/step_table.h"

namespace tessel::serve {

struct server_config {
    bool continuous = true;
    std::int64_t max_batch = 1;
    std::int64_t max_prefill_tokens = 1;
    std::int64_t block_tokens = 16;
    std::int64_t kv_blocks = 0;  // per replica
    int replicas = 1;
    std::int64_t closed_loop_users = 0;  // > 0: a request's arrival is its user's previous finish
    double idle_watts = 0;               // what the replica's chips draw between steps
};

struct serve_run {
    std::vector<outcome> outcomes;   // by request id
    std::vector<step_record> steps;  // in start order per replica
    std::vector<double> arrivals;    // the arrival times used (closed loop: set by the run)
    double idle_joules = 0;
};

/// Serves `requests` (arrival order; closed loop: arrival -1 until set). Throws input_error when a request cannot
/// be served at all (its prompt alone needs more KV blocks than the cache has).
serve_run run_server(const std::vector<request>& requests, const server_config& cfg, const step_table& steps);

}  // namespace tessel::serve
