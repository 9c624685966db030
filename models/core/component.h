// The base of every SystemC component tessel simulates. A component is a sc_module with a TLM-2.0 target
// socket `in`; its timing model is `transport(txn&)`. It owns one or more units (an HBM's channels, a
// data-oriented PE array's PEs), its statistics (named from the module hierarchy) and its trace tracks.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/core/grid_placement.h"
#include "models/core/param.h"
#include "models/core/reservation.h"
#include "models/core/stats.h"
#include "models/core/transaction.h"

namespace tessel {

class sim_context;
struct kind_info;
class compute_model;
class pe_grid;
class kernel_device;
class component;

/// A memory reached through another component (the memories behind a DMA engine), in its address space.
struct memory_tier {
    std::string name;  // the memory's name in the platform ("hbm")
    component* memory = nullptr;
    std::uint64_t base = 0;  // first address of the tier
    std::uint64_t capacity = 0;
    double peak_bytes_per_second = 0;
};

/// Everything a component needs at construction (it reads its own parameters from `params`).
struct component_args {
    sim_context* sim = nullptr;
    const kind_info* kind = nullptr;
    yaml_node params;              // the `params:` map (may be undefined)
    param_context* ctx = nullptr;  // overrides, variables, resolved values
    std::string config_path;       // dotted path for --set ("noc", "tile.pe")
    const std::vector<std::pair<std::string, std::string>>* preset = nullptr;
    std::vector<int> index;  // position in a replicate grid, if replicated
    source_location where;   // where the component is declared
    bool part = false;       // built by an owner's make_part: its map also holds `kind:` and `preset:`
};

class component : public sc_core::sc_module {
public:
    /// Requests for this component; several initiators may bind (the executor, an owning composite), and a
    /// component nobody drives may stay unbound.
    tlm_utils::multi_passthrough_target_socket<component, 32, tlm::tlm_base_protocol_types, 0,
                                               sc_core::SC_ZERO_OR_MORE_BOUND>
        in;

    component(sc_core::sc_module_name name, const component_args& args);
    ~component() override;

    const std::string& kind_name() const;
    /// The registry entry of this component's kind (nullptr when it was built without one).
    const kind_info* kind_entry() const { return m_kind; }
    /// The hierarchical name ("mesh4x4.tile[1,2].pe").
    std::string path() const { return name(); }
    sim_context& sim() const { return *m_sim; }
    std::uint32_t id() const { return m_id; }
    const std::vector<int>& replica_index() const { return m_index; }

    /// Units inside this component: {} for one, {4} for four channels, {x, y} for a grid.
    virtual std::vector<int> unit_shape() const { return {}; }
    std::uint32_t unit_count() const;
    /// "[2]" or "[3,4]" for a unit, "" when the component is a single unit.
    std::string unit_suffix(std::uint32_t unit) const;
    /// Unit index from coordinates within unit_shape(); -1 if out of range.
    int unit_at(const std::vector<int>& coords) const;

    enum class role { compute, memory, interconnect, sync, composite };
    virtual bool has_role(role r) const = 0;
    /// For memories: the unit that serves `address` (HBM channel interleaving).
    virtual int unit_for_address(std::uint64_t /*address*/) const { return 0; }
    /// For memories: capacity in bytes of one unit (0 = unbounded).
    virtual std::uint64_t capacity_bytes() const { return 0; }

    // ---- Capabilities: what a mapper asks a part instead of casting it to its kind. A kind answers the
    // queries for what it has; for the rest the base answers 0, nothing or nullptr.
    /// Peak bytes per second of the whole component (every unit, one direction); 0: not a memory, or none known.
    virtual double peak_bytes_per_second() const { return 0; }
    /// For memories: whether a requester may send a long sequential stream as one request (the memory times it
    /// at its sustained rate) instead of in paced segments; true for memories simulated at rate level.
    virtual bool takes_whole_streams() const { return false; }
    /// Bytes per second one unit moves (one DMA engine, one port); 0 when the kind has no per-unit figure.
    virtual double unit_bytes_per_second() const { return 0; }
    /// For reconfigurable units: bytes of configuration loaded into one before a graph section runs on it.
    virtual std::uint64_t config_bytes() const { return 0; }
    /// For barriers: ticks from the last of `participants` arriving to everyone's release.
    virtual tick sync_ticks(std::uint32_t /*participants*/) const { return 0; }
    /// For a switch's in-network reduction engines (switch_reducer): true (collectives reduce in them).
    virtual bool reduces_in_network() const { return false; }
    /// For DMA engines in front of DRAM: true when they cut a transfer into naturally aligned bursts, so the
    /// executor starts each packet to or from them at a multiple of the packet size in their address space (a
    /// packet boundary inside a DRAM row would open that row twice, an artefact of the packet size).
    virtual bool aligns_bursts() const { return false; }
    /// For components in front of memories (DMA engines): the memories they reach, in address order.
    virtual const std::vector<memory_tier>& memory_tiers() const;
    /// For compute components: the timing rules of one of their units (nullptr: it does not compute).
    virtual const compute_model* unit_model() const { return nullptr; }
    /// For arrays of PEs held as data (the wafer): their size and one PE's data paths, read-only (nullptr: not
    /// such an array). What a program places on them and the spans it runs on travel in the program.
    virtual const pe_grid* grid() const { return nullptr; }
    /// For devices that run whole kernels (gpu, tpu): their kernel interface (nullptr: not such a device).
    virtual kernel_device* kernels() { return nullptr; }
    virtual const kernel_device* kernels() const { return nullptr; }

    /// The timing model: updates `t.head`/`t.tail` (and `t.unit` when the component picks it).
    virtual void transport(txn& t) = 0;
    /// A wake-up asked for with sim_context::events->wake_at (components with their own clocked state).
    virtual void wake(tick /*now*/) {}
    /// A program starts at `origin`: a component whose state counts from a program's start (a static schedule's
    /// cycle 0) resets it here. `placements` is what the program keeps in this component's SRAM for the whole run
    /// (its placements that name this component; only PE grids, grid() != nullptr, are given any): a grid holds
    /// exactly those from now on.
    virtual void begin_program(tick /*origin*/, const std::vector<grid_placement>& /*placements*/) {}

    /// Work, peak rates and busy time of this component's resources.
    virtual void usage(std::vector<resource_usage>& out) const {}
    /// Seconds each compute unit was busy (one value per unit), for floorplans; empty if it has no compute.
    virtual std::vector<double> unit_busy() const { return {}; }

    /// This component's statistics; it registers only those its kind's stat_table() declares.
    stat_group& stats() { return m_stats; }
    const clock_domain& clock() const { return m_clock; }

    /// How many joules of the system one of this component's joules stands for, by part (a symmetric system
    /// simulates one chip of a group for all of them: energy_weights in engine/report/summary.h); 1 by default.
    void set_energy_weight(const energy_ledger::parts& w) { m_energy_weight = w; }

    /// A sub-component's view of its owner, when it is part of a composite.
    component* owner() const { return m_owner; }
    void set_owner(component* o) { m_owner = o; }

protected:
    /// Reads this component's parameters (call from the derived constructor).
    template <class P>
    void load_params(P& p, const component_args& a) {
        // (A unit whose parameters own a policy object cannot copy them: it reads its own.)
        if constexpr (std::is_copy_assignable_v<P>) {
            if (a.ctx) {
                const param_context::params_read read{typeid(P), a.config_path, a.params, a.preset, a.part};
                if (const void* seen = a.ctx->find_read(read)) {
                    p = *static_cast<const P*>(seen);
                    return;
                }
                read_params(p, a);
                a.ctx->keep_read(read, std::make_shared<const P>(p));
                return;
            }
        }
        read_params(p, a);
    }
    /// Builds a part of this composite through the kind registry, from `s` (read by param_decl::part), as the
    /// child module `name`; throws input_error when the chosen kind lacks the role the owner needs of it.
    std::unique_ptr<component> make_part(const char* name, const part_spec& s, const component_args& a, role needs);
    void set_clock(const frequency& f) { m_clock = f.clock(); }
    void set_clock(const clock_domain& c) { m_clock = c; }
    /// A trace track for a unit or a sub-resource ("link[1,2].east").
    int trace_track(const std::string& sub) const;
    /// Spends `joules` of the actions that serving `t` did over [start, end) in the run's energy ledger (by op and
    /// over time): every action a kind's usage() charges is spent here too, with the same figures.
    void spend(const txn& t, energy_part p, double joules, tick start, tick end) const {
        spend(t.op, p, joules, start, end);
    }
    __attribute__((always_inline)) void spend(std::uint32_t op, energy_part p, double joules, tick start,
                                              tick end) const {
        m_ledger->spend(op, p, joules * m_energy_weight[static_cast<size_t>(p)], start, end);
    }
    tick now() const;

private:
    template <class P>
    void read_params(P& p, const component_args& a) {
        param_decl d(a.params, a.ctx, a.config_path, "component '" + a.config_path + "' (" + kind_name() + ")");
        d.set_preset(a.preset);
        if (a.part) {  // the owner read these (param_decl::part)
            d.allow("kind");
            d.allow("preset");
        }
        p.declare(d);
        d.finish();
    }
    void b_transport(int from, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    sim_context* m_sim;
    energy_ledger* m_ledger;  // the simulation's (sim_context::energy)
    const kind_info* m_kind;
    std::uint32_t m_id;
    std::vector<int> m_index;
    stat_group m_stats;
    clock_domain m_clock;
    component* m_owner = nullptr;
    energy_ledger::parts m_energy_weight{1, 1, 1, 1, 1};
};

/// Sends a transaction through a TLM socket and returns when done (loosely timed: no wait).
/// Used by the executor and by composites to reach their parts.
void send(tlm::tlm_fw_transport_if<>& target, tlm::tlm_generic_payload& gp, txn& t, tick now);

/// A generic payload that carries someone else's txn for one forwarding call (a composite reaching its part, a
/// router its neighbour); the extension is detached again even if the call throws.
class borrowed_payload {
public:
    explicit borrowed_payload(txn& t) : m_t(t) { m_gp.set_extension(&m_t); }
    ~borrowed_payload() { m_gp.clear_extension(&m_t); }
    borrowed_payload(const borrowed_payload&) = delete;
    borrowed_payload& operator=(const borrowed_payload&) = delete;
    tlm::tlm_generic_payload& gp() { return m_gp; }

private:
    txn& m_t;
    tlm::tlm_generic_payload m_gp;
};

/// A reusable generic payload carrying a txn extension.
class txn_payload {
public:
    txn_payload();
    ~txn_payload();
    txn_payload(const txn_payload&) = delete;
    txn_payload& operator=(const txn_payload&) = delete;
    tlm::tlm_generic_payload& gp() { return m_gp; }
    txn& ext() { return m_txn; }

private:
    tlm::tlm_generic_payload m_gp;
    txn m_txn;
};

}  // namespace tessel
