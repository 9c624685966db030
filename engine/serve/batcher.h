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
// chunked (chunked prefill: Sarathi-Serve, vLLM's enable_chunked_prefill): every step has a budget of serve.chunk
//   tokens. The running requests that are decoding come first, one token each (preempted newest first while the
//   cache lacks their blocks, as above); the rest of the budget goes to prompts, first to those partly prefilled
//   (oldest first), then to waiting requests admitted first come first served while the batch has room and the
//   cache has blocks for the whole prompt. A step with prompt tokens is one mixed step (its decodes beside the
//   chunks); a request whose last prompt token was in it gets its first token when it ends.
// static: when the server is idle it takes up to max_batch waiting requests (as many as the KV cache holds at
//   their full length), prefills them padded to the longest prompt, and decodes the whole batch until its
//   longest output is done; a request's last token ends it, but its slot stays in the batch.
//
// speculative decoding (speculate > 0, continuous only; Leviathan et al. 2023, vLLM): a decode step is the draft
//   model's `speculate` decode steps (each sequence one draft token a step) and then one verify step of the model
//   over speculate + 1 tokens a sequence; each sequence keeps the draft tokens up to the first the model rejects
//   (each accepted with chance `acceptance`, independently: the draw is a hash of the seed, the request and its
//   tokens so far, so a run is deterministic and a sequence's draws do not depend on its batch) and one token of
//   the model's own, at most what its output still needs. Its KV cache holds blocks for all the step's tokens
//   while the step runs and keeps those of the tokens kept. A prefill also runs the draft's prefill.
//
// Replicas (parallel.dp) serve independently; requests go to them in turn as they arrive.
//
// Disaggregated (prefill_replicas > 0; Splitwise, DistServe): requests go in turn to the first prefill_replicas
// replicas, which run only prefill steps (continuous admission as above). A prefilled request's KV cache then
// goes to the decode replicas in turn, over the system's links (the transfer table's time; a replica's transfers
// leave one after another, and its blocks are held until the transfer ends). A decode replica admits arrived caches
// first come first served while its batch has room and its cache has their blocks, and runs only decode steps; a
// request it preempts goes back to the front of its prefill replica's queue and is prefilled and sent again.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/serve/request.h"
#include "engine/serve/step_table.h"

namespace tessel::serve {

struct server_config {
    bool continuous = true;
    std::int64_t chunk = 0;  // > 0 (continuous only): chunked prefill's tokens per step
    std::int64_t max_batch = 1;
    std::int64_t max_prefill_tokens = 1;
    std::int64_t block_tokens = 16;
    std::int64_t kv_blocks = 0;  // per replica
    int replicas = 1;
    std::int64_t closed_loop_users = 0;         // > 0: a request's arrival is its user's previous finish
    double idle_watts = 0;                      // what the replica's chips draw between steps
    int prefill_replicas = 0;                   // > 0: disaggregated, the first ones prefill, the rest decode
    const transfer_table* transfers = nullptr;  // disaggregated: KV transfer time by tokens
    std::int64_t speculate = 0;                 // > 0: speculative decoding's draft tokens a step
    double acceptance = 0;                      // chance the model accepts each draft token
    std::uint64_t seed = 0;                     // of the acceptance draws
    const step_table* draft = nullptr;          // speculative decoding: the draft model's steps
};

/// Speculative decoding's draws: how many of `k` draft tokens the model accepts for request `id` after `generated`
/// output tokens (the first rejection ends them), each accepted with chance `acceptance`. Deterministic.
std::int64_t accepted_drafts(std::uint64_t seed, int id, std::int64_t generated, std::int64_t k, double acceptance);

struct serve_run {
    std::vector<outcome> outcomes;           // by request id
    std::vector<step_record> steps;          // in start order per replica
    std::vector<double> arrivals;            // the arrival times used (closed loop: set by the run)
    std::vector<transfer_record> transfers;  // disaggregated: every KV cache sent, in the order they were sent
    double idle_joules = 0;
};

/// Serves `requests` (arrival order; closed loop: arrival -1 until set). Throws input_error when a request cannot
/// be served at all (its prompt alone needs more KV blocks than the cache has).
serve_run run_server(const std::vector<request>& requests, const server_config& cfg, const step_table& steps);

}  // namespace tessel::serve
