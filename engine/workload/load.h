// The one entry point for getting a workload: a YAML file, an ONNX model, or a built-in name. This is what
// `tessel run --workload W --set workload.KEY=VALUE` and `tessel graph info` call.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/workload/graph.h"
#include "engine/workload/source.h"
#include "engine/workload/workload_params.h"

namespace tessel {

/// Loads `spec`: a path to a .yaml/.yml workload or an .onnx model, or a built-in name (a workload file in
/// the repository's workloads/ folder such as resnet50, bert-large, gpt2, llama2-7b, mlp, gemm, or a
/// generator name with its defaults such as resnet or stencil). `overrides` are the --set workload.KEY=VALUE
/// pairs without the "workload." prefix; one that matches no parameter is an input_error with a
/// did-you-mean. The graph comes back finished: shapes checked, every op costed, weights marked,
/// graph.parameters holding the resolved parameters.
/// A convenience for one graph: make_workload_source(spec)->build(parse_workload_overrides(overrides)).
workload_graph load_workload(const std::string& spec, const std::map<std::string, std::string>& overrides);

/// Built-in workload names for `tessel list`: the workloads/ files (without .yaml), then the generators.
std::vector<std::string> builtin_workloads();

/// The folder of built-in workload files (the repository's workloads/, or $TESSEL_WORKLOADS when set).
std::string workloads_dir();

/// Carries out what every workload's common parameters ask for (training: expands the backward pass and
/// optimizer step; fuse: elementwise fusion) and records the resolved parameters in g.parameters.
void apply_workload_options(workload_graph& g, const workload_params& params);

}  // namespace tessel
