// A serving request and what became of it: the unit `tessel serve` schedules (docs/serving.md).
#pragma once

#include <cstdint>
#include <vector>

namespace tessel::serve {

/// One inference request: it arrives, its prompt is prefilled, then its output is decoded one token a step.
struct request {
    int id = 0;
    double arrival_s = 0;
    std::int64_t prompt_tokens = 0;
    std::int64_t output_tokens = 0;  // tokens generated, the first by the prefill step
};

/// When a request's tokens came out. Times are absolute simulated seconds; -1 until they happen.
struct outcome {
    double first_token_s = -1;  // end of the step that produced its first token
    double finish_s = -1;       // end of the step that produced its last token
    int preemptions = 0;        // times its KV blocks were taken back (recomputed on readmission)
    int replica = 0;            // which model replica served it (disaggregated: the one that prefilled it)

    bool done() const { return finish_s >= 0; }
};

/// One batch step as the scheduler ran it.
struct step_record {
    double start_s = 0, end_s = 0;
    bool prefill = false;
    std::int64_t batch = 0;      // sequences in the step
    std::int64_t tokens = 0;     // prefill: padded batch x longest prompt; decode: one per sequence (speculative:
                                 // its verified tokens); mixed: both
    double context = 0;          // decode: mean tokens in the KV cache per sequence; prefill: the padded length
    std::int64_t decodes = 0;    // mixed (chunked prefill): sequences decoding beside the prompts' chunks
    std::int64_t emitted = 0;    // speculative decode: output tokens the step gave (one to speculate + 1 each)
    std::int64_t kv_blocks = 0;  // blocks in use after the step
    double energy_j = 0;
    int replica = 0;
};

/// A KV cache sent from a prefill replica to a decode replica (disaggregated serving).
struct transfer_record {
    int request = 0;
    int from = 0, to = 0;     // replicas
    std::int64_t tokens = 0;  // in the cache sent
    double ready_s = 0;       // its prefill ended
    double start_s = 0;       // the prefill replica's links were free (transfers leave one after another)
    double end_s = 0;
};

}  // namespace tessel::serve
