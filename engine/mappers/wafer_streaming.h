// `wafer_streaming` mapper: weight streaming on a wafer-scale engine (Cerebras' execution mode for models that
// do not fit on the wafer). Ops run one after another, each on the wafer's west-edge rectangle; activations stay
// resident in the PEs (column s of the rectangle keeps rows [s/S, (s+1)/S) of every activation for the whole
// run, its lines splitting the features) and each op's weights stream in from MemoryX through the edge ports,
// line by line, in `chunks` pieces, while the PEs compute on the piece before. Each weight crosses its line once
// and the routers multicast it to every PE on the line, which applies it to its resident rows; partial sums are
// summed down each column and scattered back up it, so the output is resident for the next op the same way.
// A product of two activations (attention) gathers its stationary operand along the lines instead.
//
// Memory: the activations alive at any point (produced and still needed) must fit in the rectangle's SRAM;
// when they do not, the batch is cut into micro-batches that each stream all the weights again (slower, and
// the notes say so); when even one row per column does not fit, the mapper stops with an error that says by
// how much, and when only `max_microbatches` stands in the way, that this is the mapper's limit. Leaves out:
// gradient streaming back to MemoryX (training), SwarmX across several systems, overlap of one op's weight
// stream with the previous op's compute.
#pragma once

#include "engine/mappers/wafer_common.h"

namespace tessel {

class wafer_streaming_mapper : public mapper {
public:
    struct options {
        wafer::common_options common;
        std::int64_t max_microbatches = 64;
        void declare(param_decl& d);
    };
    explicit wafer_streaming_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;
    bool streams_weights() const override { return true; }

private:
    options m_opt;
};

namespace wafer {

/// The weight-streaming plan (wafer_streaming, and wafer_pipeline's fallback), its plan_report as the record.
mapping plan_streaming(const workload_graph& g, const fabric& f, const analysis& an, const common_options& o,
                       std::int64_t max_microbatches);

}  // namespace wafer

}  // namespace tessel
