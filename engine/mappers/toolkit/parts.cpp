#include "engine/mappers/toolkit/parts.h"

#include <algorithm>
#include <cstdlib>

namespace tessel::toolkit {

const platform::group* find_optional_part(const platform& plat, const std::string& name, const part_query& q) {
    if (!name.empty()) {
        const platform::group* g = plat.find_group(name);
        if (!g) throw input_error(q.who + ": no component '" + name + "' (option mapper." + q.option + ")");
        if (!q.fits(first(plat, *g)))
            throw input_error(q.who + ": '" + name + "' (" + g->kind + ") is not " + q.what + " (option mapper." +
                              q.option + ")");
        return g;
    }
    for (const auto& g : plat.groups())
        if (q.fits(first(plat, g))) return &g;
    return nullptr;
}

const platform::group& find_part(const platform& plat, const std::string& name, const part_query& q) {
    const platform::group* g = find_optional_part(plat, name, q);
    if (!g)
        throw input_error(q.who + ": platform '" + plat.title() + "' has no " + q.what + " (option mapper." + q.option +
                          " names one)");
    return *g;
}

bool computes_with_own_memory(const component& c) {
    return c.unit_model() && c.has_role(component::role::compute) && c.has_role(component::role::memory);
}
bool is_pure_memory(const component& c) {
    return c.has_role(component::role::memory) && !c.has_role(component::role::compute);
}
bool is_barrier(const component& c) { return c.has_role(component::role::sync); }
bool runs_kernels(const component& c) { return c.kernels() != nullptr; }
bool is_reconfigurable_compute(const component& c) { return c.unit_model() && c.config_bytes() > 0; }
bool is_reconfigurable_memory(const component& c) { return is_pure_memory(c) && c.config_bytes() > 0; }
bool fronts_memories(const component& c) { return !c.memory_tiers().empty(); }
bool is_pe_grid(const component& c) { return c.grid() != nullptr; }

double batch_samples(const workload_graph& g) { return std::max(1.0, g.batch); }

}  // namespace tessel::toolkit
