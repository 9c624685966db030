// Finding a mapper's parts on a platform by role and capability, never by casting to a component kind. A
// mapper option may name the group to use (`mapper.tiles: tiles`); otherwise the first group, in file order,
// whose components have what the mapper needs. Errors name the mapper, the option and what was missing.
#pragma once

#include <functional>
#include <string>

#include "engine/netlist/platform.h"
#include "engine/workload/graph.h"

namespace tessel::toolkit {

/// What a mapper looks for, for the search and its error messages.
struct part_query {
    std::string who;     // "bsp mapper"
    std::string option;  // the mapper option that names it ("tiles": mapper.tiles)
    std::string what;    // what it must be, as a noun phrase ("compute tiles with their own memory")
    std::function<bool(const component&)> fits;  // whether a group's (first) component is one
};

/// The group `name` names (which must fit), or when `name` is empty the first group that fits; throws
/// input_error when there is none.
const platform::group& find_part(const platform& plat, const std::string& name, const part_query& q);

/// The same, but nullptr when `name` is empty and no group fits (an optional part).
const platform::group* find_optional_part(const platform& plat, const std::string& name, const part_query& q);

/// The first component of a group.
inline const component& first(const platform& plat, const platform::group& g) { return plat.comp(g.ids.front()); }

// Capabilities mappers look for.
bool computes_with_own_memory(const component& c);  // tiles: a compute unit model and private memory
bool is_pure_memory(const component& c);            // a memory that does not compute (HBM, DDR, a PMU)
bool is_barrier(const component& c);
bool runs_kernels(const component& c);               // a kernel_device (gpu, tpu)
bool is_reconfigurable_compute(const component& c);  // compute units loaded with a configuration (RDU PCUs)
bool is_reconfigurable_memory(const component& c);   // memory units loaded with a configuration (RDU PMUs)
bool fronts_memories(const component& c);            // a DMA engine with memories behind it (RDU AGCUs)
bool is_pe_grid(const component& c);                 // a PE array held as data (the wafer)

/// Items one run of a graph processes: its `batch` parameter, at least 1.
double batch_samples(const workload_graph& g);

}  // namespace tessel::toolkit
