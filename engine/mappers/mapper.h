// Mappers lower a workload graph onto a platform as a program, one mapper per execution style (mesh tiling,
// spatial pipeline, wafer-scale, bulk-synchronous, static schedule, kernel-by-kernel). A platform names its
// mapper and options in its `mapper:` section (`impl: mesh`); options are declared like component parameters,
// so they are strict, documented by `tessel describe`, and overridable with --set mapper.NAME=VALUE.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/netlist/platform.h"
#include "engine/program/program.h"
#include "engine/report/floorplan.h"
#include "engine/workload/graph.h"
#include "models/core/registry.h"

namespace tessel {

/// What a mapper hands back: the program and what it decided.
struct mapping {
    program prog;
    std::vector<std::string> notes;  // decisions a user should see (tiling, spills, fallbacks), one line each
    nlohmann::json details;          // per-op placement and plan, written into the run summary
    double samples = 1;              // items (images, sequences) one run of the program processes
    /// Where ops were placed on 2D grids of units, for floorplans: (group or component name, region).
    std::vector<std::pair<std::string, floorplan_region>> regions;
    /// Component id ranges [first, end) that stood idle because a representative ran their share (a symmetric
    /// system run's other chips): the resource table leaves them out, so its means are over what ran.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> represented;
    /// How many chips each simulated chip stands for (chips / simulated chips; 1 when every chip runs): the
    /// system's own links and switches carried only the simulated ranks' traffic, the same as every rank's.
    double traffic_scale = 1;
};

struct run_summary;

class mapper {
public:
    virtual ~mapper() = default;
    virtual mapping map(const workload_graph& g, const platform& plat) = 0;
    /// Called once after the mapper is made, before any map(): a mapper that reads more of the run's configuration
    /// than its own options (the system mapper: the parallel plan and each chip's mapper) reads it here, so
    /// every --set it consumes is known before the run checks for unused ones.
    virtual void configure(const platform& /*plat*/, param_context& /*ctx*/) {}
    /// After the run: add what this execution style explains best to the summary (time per superstep split
    /// into compute, sync and exchange; per pipeline section; predicted against simulated cycles), as notes
    /// and as `summary.details`. `r` has every step's start and end.
    virtual void explain(const mapping& m, const platform& plat, const executor::result& r, run_summary& s) const {}
    /// Whether explain() reads the kernel devices' per-kernel records; when not, the run does not keep them.
    virtual bool reads_kernel_records() const { return true; }
    /// Whether map() refuses a graph whose tensors do not fit the device's memory (mappers that walk tensor
    /// lifetimes). A caller that checks memory with a fuller model of its own turns it off: the system mapper's
    /// plan knows what one pass's graph cannot (ZeRO shards, microbatches in flight, recomputation block by block).
    void check_device_memory(bool on) { m_check_device_memory = on; }

protected:
    bool m_check_device_memory = true;
};

struct mapper_info {
    std::string name;
    std::string brief;
    std::function<std::vector<param_spec>()> describe;
    /// Builds the mapper, reading its options (the platform's `mapper:` map) through `d`.
    std::function<std::unique_ptr<mapper>(param_decl& d)> make;
};

class mapper_registry {
public:
    static mapper_registry& instance();
    bool add(mapper_info m);
    const mapper_info* find(const std::string& name) const;
    std::vector<std::string> names() const;
    const std::vector<std::string>& errors() const { return m_errors; }

private:
    std::vector<mapper_info> m_mappers;
    std::vector<std::string> m_errors;
};

/// Builds a mapper info for class M with a nested `options` struct (declare) and a constructor M(options).
template <class M>
mapper_info make_mapper(std::string name, std::string brief) {
    mapper_info i;
    i.name = std::move(name);
    i.brief = std::move(brief);
    i.describe = [] { return describe_params<typename M::options>(); };
    i.make = [](param_decl& d) -> std::unique_ptr<mapper> {
        typename M::options o;
        o.declare(d);
        d.finish();
        return std::make_unique<M>(o);
    };
    return i;
}

/// Creates the platform's mapper from its `mapper:` section; `ctx` supplies --set overrides under `path`
/// ("mapper", or "gpu.mapper" for the chips of a system).
std::unique_ptr<mapper> create_mapper(const platform& plat, param_context& ctx, const std::string& path = "mapper");

}  // namespace tessel

#define TESSEL_REGISTER_MAPPER(...)                                        \
    static const bool TESSEL_CONCAT(tessel_mapper_registered_, __LINE__) = \
        ::tessel::mapper_registry::instance().add(__VA_ARGS__)
