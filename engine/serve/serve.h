// `tessel serve`: an LLM served token by token on a chip or a system (docs/serving.md).
//
// 1. The model: the workload (a decoder with a KV cache: the llama generator) is built once from its source to
//    count the weights and the KV-cache bytes per token one chip holds; the platform's mapper gives the chip's
//    memory, and serve.memory_utilization of it, less the weights, is the KV cache, in blocks.
// 2. The steps: the batch-step shapes the run can meet (step_table.h's grid) are simulated as a sweep of
//    `tessel run`s (local processes or Slurm, resumable: the results stay in the output folder).
// 3. The server: requests arrive (serve_options.h), the batcher (batcher.h) schedules them step by step, each step
//    costing what the table says, and the metrics (serve_metrics.h) are printed and written: summary.json,
//    requests.csv, steps.csv and a Perfetto trace (trace.json). Disaggregated (serve.prefill_replicas), the KV
//    caches sent from prefill to decode replicas are simulated too (kv_transfer.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/sweep/driver.h"

namespace tessel::serve {

struct serve_cli {
    std::string platform, workload;   // as the user named them
    std::vector<std::string> sets;    // --set: serve.*, workload.*, parallel.* and platform parameters
    std::string out_dir;              // empty: out/serve/PLATFORM-WORKLOAD
    bool json = false;                // summary.json on stdout instead of the report
    std::vector<std::int64_t> curve;  // closed-loop users to serve at, each its own run (--curve): latency
                                      // against throughput instead of one run
    sweep::sweep_options sweep;       // how the step shapes are simulated
};

/// Returns the exit status: 0 when served, 128 + signal when interrupted while simulating steps (finished steps
/// are kept). Bad input throws input_error.
int run_serve(const serve_cli& o, std::ostream& out, std::ostream& err);

}  // namespace tessel::serve
