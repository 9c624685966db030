#include "engine/workload/generators.h"

#include "models/core/yaml_node.h"

namespace tessel {

const std::vector<generator_info>& generators() {
    static const std::vector<generator_info> g = {gemm_generator(),         mlp_generator(),    resnet_generator(),
                                                  mobilenet_v2_generator(), bert_generator(),   gpt2_generator(),
                                                  llama_generator(),        stencil_generator()};
    return g;
}

const generator_info* find_generator(std::string_view name) {
    for (const auto& g : generators())
        if (g.name == name) return &g;
    return nullptr;
}

void declare_generator_params(const generator_info& gen, workload_params& params) {
    for (const auto& p : gen.params) params.declare(p.name, p.default_value, p.doc);
    params.declare_common();
}

workload_graph run_generator(const generator_info& gen, workload_params& params) {
    for (const auto& [key, by_value] : gen.presets) {
        const std::string& v = params.text(key);
        const auto it = by_value.find(v);
        if (it == by_value.end()) {
            // The default value of a preset parameter has no entry: its values are the defaults themselves.
            const auto* decl = params.find(key);
            bool is_default = false;
            for (const auto& p : gen.params) is_default |= p.name == key && p.default_value == v;
            if (is_default) continue;
            std::vector<std::string> known;
            for (const auto& [name, _] : by_value) known.push_back(name);
            for (const auto& p : gen.params)
                if (p.name == key) known.insert(known.begin(), p.default_value);
            fail("generator " + gen.name + ": " + key + " '" + v + "' is not known" + did_you_mean(v, known) +
                     "; known: " + join(known),
                 decl ? decl->where : source_location{});
        }
        for (const auto& [name, value] : it->second) {
            const auto* p = params.find(name);
            if (p && !p->user) params.declare(name, value);
        }
    }
    return gen.build(params);
}

}  // namespace tessel
