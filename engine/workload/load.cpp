#include "engine/workload/load.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "engine/workload/generator_source.h"
#include "engine/workload/generators.h"
#include "engine/workload/onnx_import.h"
#include "engine/workload/passes.h"
#include "engine/workload/scalesim_topology.h"
#include "engine/workload/training.h"
#include "engine/workload/yaml_workload.h"
#include "models/core/yaml_node.h"

namespace tessel {

namespace fs = std::filesystem;

std::string workloads_dir() {
    if (const char* env = std::getenv("TESSEL_WORKLOADS")) return env;
    return std::string(TESSEL_SOURCE_DIR) + "/workloads";
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> workload_files() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(workloads_dir(), ec)) {
        const std::string f = e.path().filename().string();
        if (e.is_regular_file() && ends_with(f, ".yaml")) names.push_back(f.substr(0, f.size() - 5));
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

std::vector<std::string> builtin_workloads() {
    std::vector<std::string> names = workload_files();
    for (const auto& g : generators())
        if (std::find(names.begin(), names.end(), g.name) == names.end()) names.push_back(g.name);
    return names;
}

void apply_workload_options(workload_graph& g, const workload_params& params) {
    const std::string training = params.choice("training", {"none", "sgd", "adam"});
    const bool fuse = params.boolean("fuse");
    if (training != "none") {
        training_options opt;
        opt.optimizer = training;
        g = expand_training(g, opt);
    }
    if (fuse) fuse_elementwise(g);
    for (const auto& [k, v] : params.resolved()) g.parameters[k] = v;
    g.resolve_batch();
}

std::shared_ptr<const workload_source> make_workload_source(const std::string& spec) {
    if (spec.empty())
        fail("no workload given: name a .yaml or .onnx file or a built-in workload (" + join(builtin_workloads()) +
             ")");
    if (ends_with(spec, ".onnx")) return make_onnx_source(spec);
    if (ends_with(spec, ".yaml") || ends_with(spec, ".yml")) return make_yaml_source(spec);
    if (ends_with(spec, ".csv")) return make_yaml_source_text(scalesim_topology_yaml(spec), spec);
    std::error_code ec;
    if (fs::is_regular_file(spec, ec))
        fail("workload '" + spec +
             "': unknown file type; expected a .yaml/.yml workload, an .onnx model or a SCALE-Sim "
             "topology (.csv)");
    const std::string file = workloads_dir() + "/" + spec + ".yaml";
    if (fs::is_regular_file(file, ec)) return make_yaml_source(file, spec);
    if (const generator_info* gen = find_generator(spec)) {
        workload_params params(spec);
        declare_generator_params(*gen, params);
        return make_generator_source(spec, *gen, std::move(params));
    }
    const auto names = builtin_workloads();
    fail("unknown workload '" + spec + "'" + did_you_mean(spec, names) +
         ": not a file, a built-in workload or a generator; built-in: " + join(names) +
         " (or give a path to a .yaml or .onnx file)");
}

workload_graph load_workload(const std::string& spec, const std::map<std::string, std::string>& overrides) {
    return make_workload_source(spec)->build(parse_workload_overrides(overrides));
}

}  // namespace tessel
