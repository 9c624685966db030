// `wafer_pipeline` mapper: layer-pipelined execution on a wafer-scale engine. Every op gets its own rectangle
// of PEs for the whole run, sized by its work, and keeps its weights in those PEs' SRAM; activations flow over
// the fabric from one rectangle to the next, chunk by chunk, so all ops work at once on different chunks.
//
// Sizing: each op's time per chunk is estimated as the largest of its datapath/SRAM work spread over P PEs,
// its input stream over its lines and its partial sums (or output) over its columns (each line and column a
// 32-bit-per-cycle link); a bisection finds the smallest common time whose PE counts fill the wafer, never
// below what holds the op's weights. Layout: recursive bisection of the wafer in topological order, so
// neighbouring ops sit side by side. Inside a rectangle (see wafer_common.h): the streamed operand enters each
// line at its far end and the routers multicast it along the line; a matrix product's partial sums are summed
// down each column to the rectangle's edge, where its output leaves for the consumers.
//
// A model whose weights do not fit in the wafer's SRAM either falls back to weight streaming
// (mapper.fallback: streaming, the default, with a note saying so and why) or stops with an error that
// says by how much it is short. Leaves out: splitting the graph into sections run one after another,
// pipelining across samples beyond the chunks of one batch, the causal mask's skipped work.
#pragma once

#include "engine/mappers/wafer_common.h"

namespace tessel {

class wafer_pipeline_mapper : public mapper {
public:
    struct options {
        wafer::common_options common;
        std::string fallback;
        std::int64_t max_microbatches = 64;
        std::string quantum;  // auto, 0 or a time
        void declare(param_decl& d);
    };
    explicit wafer_pipeline_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;

private:
    options m_opt;
};

}  // namespace tessel
