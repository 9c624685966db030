// Model generators: parameterised builders for the models architects use (mlp, gemm, resnet, mobilenet_v2,
// bert, gpt2, llama, stencil). Each declares its parameters once, with default and meaning; named presets
// (bert variant large, llama mode decode) fill in parameters the user did not set. The table is explicit
// rather than self-registering, so a static library link cannot drop a generator.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/workload/graph.h"
#include "engine/workload/workload_params.h"

namespace tessel {

struct generator_param {
    std::string name;
    std::string default_value;
    std::string doc;
};

struct generator_info {
    std::string name;
    std::string doc;
    std::vector<generator_param> params;
    /// presets[param][value] = values for other parameters, applied where the user did not set them
    /// (presets["variant"]["large"] = {layers: 24, hidden: 1024, ...}).
    std::map<std::string, std::map<std::string, std::map<std::string, std::string>>> presets;
    workload_graph (*build)(const workload_params& p) = nullptr;
};

/// All generators, in documentation order.
const std::vector<generator_info>& generators();
const generator_info* find_generator(std::string_view name);

/// Declares the generator's parameters (with defaults) and the common ones into `params`.
void declare_generator_params(const generator_info& gen, workload_params& params);
/// Applies presets for parameters the user did not set, then builds the graph. `params` must come from
/// declare_generator_params, with the user's values and overrides applied.
workload_graph run_generator(const generator_info& gen, workload_params& params);

// The generators (one source file each family).
generator_info gemm_generator();
generator_info mlp_generator();
generator_info resnet_generator();
generator_info mobilenet_v2_generator();
generator_info bert_generator();
generator_info gpt2_generator();
generator_info llama_generator();
generator_info stencil_generator();

}  // namespace tessel
