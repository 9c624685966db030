// Mappers lower a workload graph onto a platform as a program, one mapper per execution style (mesh tiling,
// spatial pipeline, wafer-scale, bulk-synchronous, static schedule, kernel-by-kernel). A platform names its
// mapper and options in its `mapper:` section (`impl: mesh`); options are declared like component parameters,
// so they are strict, documented by `tessel describe`, and overridable with --set mapper.NAME=VALUE.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/mappers/region.h"
#include "engine/netlist/platform.h"
#include "engine/program/program.h"
#include "engine/workload/graph.h"
#include "models/core/registry.h"

namespace tessel {

/// What a mapper decided that explaining a run needs (superstep boundaries, the schedule's predicted cycles,
/// per-section step ids). Each mapper family derives its own record next to the mapper and fills it in map();
/// the family's explainer (engine/report/explain/) reads it back. A base class so a mapping stays one type for
/// every mapper while the record stays typed.
struct mapping_record {
    virtual ~mapping_record() = default;
};

/// What a mapper hands back: the program and what it decided. A value: the mapper keeps nothing of it.
struct mapping {
    program prog;
    std::vector<std::string> notes;  // decisions a user should see (tiling, spills, fallbacks), one line each
    // Per-op placement and plan, written into the run summary. Null, built from value_t: json's default
    // constructor is declared noexcept but calls one that may throw, which would make mapping's noexcept too.
    nlohmann::json details = nlohmann::json(nlohmann::json::value_t::null);
    double samples = 1;  // items (images, sequences) one run of the program processes
    /// The share of the workload's work the program runs: 1, or a system window's share of the microbatches
    /// (mapper.window), which scales the workload's FLOPs to what the run simulated.
    double simulated_share = 1;
    /// Where ops were placed on 2D grids of units, for floorplans: (group or component name, region).
    std::vector<std::pair<std::string, floorplan_region>> regions;
    /// Component id ranges [first, end) that stood idle because a representative ran their share (a symmetric
    /// system run's other chips): the resource table leaves them out, so its means are over what ran.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> represented;
    /// How many chips each simulated chip stands for (chips / simulated chips; 1 when every chip runs): the
    /// system's own links and switches carried only the simulated ranks' traffic, the same as every rank's.
    double traffic_scale = 1;
    /// The mapper family's typed record of what it planned (null when it records nothing).
    std::shared_ptr<const mapping_record> record;

    /// The record as family type R, or null when the mapping holds none or another family's.
    template <class R>
    const R* record_as() const {
        return dynamic_cast<const R*>(record.get());
    }
};

class mapper {
public:
    virtual ~mapper() = default;
    /// Plans `g` on `plat`: const and pure, so one mapper maps many graphs and two calls give equal programs.
    virtual mapping map(const workload_graph& g, const platform& plat) const = 0;
    /// Called once after the mapper is made, before any map(): a mapper that reads more of the run's configuration
    /// than its own options (the system mapper: the parallel plan and each chip's mapper) reads it here, so
    /// every --set it consumes is known before the run checks for unused ones.
    virtual void configure(const platform& /*plat*/, param_context& /*ctx*/) {}
    /// Whether map() refuses a graph whose tensors do not fit the device's memory (mappers that walk tensor
    /// lifetimes). A caller that checks memory with a fuller model of its own turns it off: the system mapper's
    /// plan knows what one pass's graph cannot (ZeRO shards, microbatches in flight, recomputation block by block).
    void check_device_memory(bool on) { m_check_device_memory = on; }
    /// Whether each graph map() gets is one piece of a chip's longer program: the system mapper cuts a stage's
    /// passes at every collective, and a chip runs its pieces (and in training its forward, backward and
    /// optimizer passes) one after another. Nothing of one piece then stays on chip while the others run, so a
    /// mapper that keeps a whole graph's weights on chip between runs (the RDU's steady state) loads them, and one
    /// that keeps weights in on-chip memory when they fit (the IPU's tiles) decides by `chip_bytes`, the weights
    /// and state the whole chip program holds, not by the piece's. `update_bytes` is what it keeps between its
    /// pieces for the update (gradients and optimizer state, after ZeRO): a mapper whose memory holds all of it
    /// beside what a piece stores (the RDU's HBM) leaves room for the share the piece does not hold itself.
    void maps_pieces(double chip_bytes, double update_bytes = 0) {
        m_maps_pieces = true;
        m_piece_chip_bytes = chip_bytes;
        m_piece_update_bytes = update_bytes;
    }
    /// Bytes of the memory that holds a model's weights and KV cache on one chip of `plat` (after configure), for
    /// `tessel serve`'s KV-cache budget; 0 when the mapper does not know one.
    virtual std::uint64_t memory_capacity(const platform& /*plat*/) const { return 0; }
    /// Whether every step streams the weights in from a store off the chip instead of holding them (a Cerebras
    /// wafer's weight streaming): memory then does not bound the model, and there is no KV-cache budget to size.
    virtual bool streams_weights() const { return false; }
    /// A copy of this mapper that maps in a coarser form (fewer program steps for the same work, within the
    /// tolerance its docs state), or null when it has none or is coarse already, or its form was fixed by the
    /// user. The system mapper takes it when the fine form of an iteration would be over the steps budget.
    virtual std::unique_ptr<mapper> coarser() const { return nullptr; }
    /// Where coarser() is not null: the fine form's cost (its steps, and its packets where the mapper counts them)
    /// above which this mapper's own auto form maps a graph coarse. Each mapping it makes says its fine form's cost
    /// in details["fine_form_cost"], so the system mapper can apply the same rule to a whole iteration of pieces.
    /// Infinity (the default): only the steps budget sends a system's pieces coarse. The RDU's says its rule; the
    /// IPU's does not yet (its coarse form ran an IPU-POD16 BERT-large step at 187.7 ms against the fine form's
    /// 143.8 ms, a gap its single-chip checks do not show).
    virtual double coarse_above() const { return std::numeric_limits<double>::infinity(); }
    /// The name the mapper is registered under (its explainer's name too); set by create_mapper.
    const std::string& name() const { return m_name; }
    void set_name(std::string n) { m_name = std::move(n); }

protected:
    bool m_check_device_memory = true;
    bool m_maps_pieces = false;
    double m_piece_chip_bytes = 0;
    double m_piece_update_bytes = 0;

private:
    std::string m_name;
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

#define TESSEL_REGISTER_MAPPER(...)                                           \
    static const bool TESSEL_CONCAT(tessel_mapper_registered_, __COUNTER__) = \
        ::tessel::mapper_registry::instance().add(__VA_ARGS__)
