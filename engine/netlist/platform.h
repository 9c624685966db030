// A platform: the SystemC module tree built from a platform YAML (components by kind from the registry,
// replicate grids, presets, --set overrides, connections by hierarchical path), plus the topology the
// executor routes over: which network port each component unit attaches to, and which network ports are
// bridged (chip-to-chip links). A system is a platform whose `chips:` instantiate whole chip platforms
// (each a nested platform with prefixed names and parameters) joined by the system's own networks.
// See docs/platform-yaml.md and docs/systems.md.
#pragma once

#include <systemc>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/netlist/endpoint.h"
#include "models/core/component.h"
#include "models/core/param.h"
#include "models/core/sim_context.h"
#include "models/core/yaml_node.h"

namespace tessel {

class interconnect;

/// A network port.
struct attach_point {
    std::uint32_t net = ~0u;
    std::uint32_t port = 0;
    bool valid() const { return net != ~0u; }
};

/// One network crossed by a route: from port `in` to port `out` of `net`.
struct route_segment {
    std::uint32_t net;
    std::uint32_t in, out;
};

class platform : public sc_core::sc_module {
public:
    /// Builds the platform from a parsed YAML file. `ctx` carries --set overrides and collects resolved values.
    /// `config_prefix` ("gpu.") prefixes every parameter path of a chip built inside a system.
    platform(const sc_core::sc_module_name& name, const yaml_node& root, param_context& ctx, sim_context& sim,
             const std::string& config_prefix = {});
    ~platform() override;

    /// Reads `path` and builds it; the module is named after the file's `platform:` key.
    static std::unique_ptr<platform> load(const std::string& path, param_context& ctx, sim_context& sim);

    const std::string& title() const { return m_title; }
    const std::string& description() const { return m_description; }
    /// How far its numbers can be trusted: "calibrated: ...", "checked: ..." or "uncalibrated: ..." (`validation:`).
    const std::string& validation() const { return m_validation; }
    const std::string& file() const { return m_file; }
    sim_context& sim() const { return m_sim; }
    const clock_domain& clock() const { return m_clock; }
    tick quantum() const { return m_quantum; }
    /// Thermal design power in watts (`tdp:`; a system's is the sum of its chips'); 0 when not declared.
    double tdp_watts() const { return m_tdp; }

    /// A named entry of `components:` (one component, or a replicate grid of them).
    struct group {
        std::string name;
        std::string kind;
        std::vector<std::string> dims;   // replicate dimension names (x, y) or empty
        std::vector<int> shape;          // replicate extents, empty when not replicated
        std::vector<std::uint32_t> ids;  // component ids, first dimension fastest
        source_location where;
    };
    const std::vector<group>& groups() const { return m_groups; }
    const group* find_group(const std::string& name) const;
    /// Groups whose components have a role, in file order.
    std::vector<const group*> groups_with(component::role r) const;

    /// A named entry of `chips:`: one chip platform instantiated once or as a replicate grid. Every chip of a
    /// group is built from the same file with the same parameters, so its components are created in the same
    /// order: component `first[0] + k` of chip 0 is component `first[c] + k` of chip c.
    struct chip_group {
        std::string name;
        std::string file;                    // the chip platform's file
        std::vector<std::string> dims;       // replicate dimension names, empty when not replicated
        std::vector<int> shape;              // replicate extents
        std::vector<const platform*> chips;  // first dimension fastest
        std::vector<std::uint32_t> first;    // per chip: its first component id
        std::uint32_t components = 0;        // components per chip
        source_location where;
    };
    const std::vector<chip_group>& chip_groups() const { return m_chip_groups; }
    const chip_group* find_chip_group(const std::string& name) const;
    /// True for a system (a platform with `chips:`).
    bool is_system() const { return !m_chip_groups.empty(); }

    /// A component by id: mutable for those who run the platform (the executor), read-only through a const
    /// platform (mappers plan on one and cannot change a component).
    component& comp(std::uint32_t id);
    const component& comp(std::uint32_t id) const;
    /// How many components the simulation holds (ids 0 .. count - 1: this platform's, parts included).
    std::uint32_t component_count() const;
    /// Top-level component ids (not parts of composites), in creation order.
    const std::vector<std::uint32_t>& top_level() const { return m_top; }

    /// Resolves "tile[1,2]", "tile[1,2].sram", "hbm", "hbm[3]", "tiles[4,5]" to an endpoint; errors name what exists.
    endpoint resolve(const std::string& path, const source_location& where) const;
    /// A readable name for an endpoint ("tile[1,2]" or "hbm[3]").
    std::string name_of(const endpoint& e) const;

    /// The network port a component's unit attaches to (through its owner for parts of composites).
    attach_point attachment(std::uint32_t comp, std::int32_t unit) const {
        if (comp < m_attach.size() && !m_attach[comp].empty()) {
            const auto& slots = m_attach[comp];
            if (slots.size() == 1) return slots[0];
            if (unit >= 0 && static_cast<size_t>(unit) < slots.size()) return slots[static_cast<size_t>(unit)];
            return attach_point{};
        }
        return owner_attachment(comp);
    }
    /// Networks a packet crosses from one port to another (across bridges); throws if unreachable.
    std::vector<route_segment> route(const attach_point& from, const attach_point& to) const;
    /// The same, into `out` (reusing its storage: called once per packet when routes vary).
    void route_into(const attach_point& from, const attach_point& to, std::vector<route_segment>& out) const {
        if (from.net != to.net) {
            cached_route_into(from, to, out);
            return;
        }
        out.resize(1);
        out[0] = route_segment{from.net, from.port, to.port};
    }
    interconnect& net(std::uint32_t id);
    const interconnect& net(std::uint32_t id) const;

    /// The `parameters:` block with --set applied and ${...} substituted (name -> value text), in file order:
    /// the variables a program's {expr} sees besides its loop variables.
    const std::vector<std::pair<std::string, std::string>>& parameters() const { return m_parameters; }

    /// The `mapper:` section (may be undefined).
    const yaml_node& mapper_spec() const { return m_mapper; }
    /// The `parallel:` section of a system (the default parallel plan; may be undefined).
    const yaml_node& parallel_spec() const { return m_parallel; }

    /// Every parameter's final value, as "path: value" lines (the resolved configuration).
    std::string resolved_yaml(const param_context& ctx) const;

private:
    void build_components(const yaml_node& comps, param_context& ctx);
    void build_chips(const yaml_node& chips, param_context& ctx);
    /// route() remembered per pair of networks (the path between two networks does not depend on the ports).
    void cached_route_into(const attach_point& from, const attach_point& to, std::vector<route_segment>& out) const;
    std::pair<std::string, source_location> top_value_param(param_context& ctx, const yaml_node& params,
                                                            const yaml_node::entry& e) const;
    void build_connections(const yaml_node& conns);
    void connect(const std::string& text, const source_location& where);
    struct ref {
        const group* g = nullptr;
        std::uint32_t comp = ~0u;
        std::int32_t unit = 0;
        bool whole = false;  // no index given on a multi-unit component
    };
    struct parsed_side {
        std::string name;
        std::vector<std::string> replica_idx, unit_idx;  // expression texts
        std::string sub;                                 // ".sram" part
        std::vector<std::string> sub_idx;                // ".hbm[3]": a unit of the part
    };
    parsed_side parse_side(const std::string& text, const source_location& where) const;
    /// "gpu[3].hbm" when `gpu` is a chip group: the group, the chip index texts and the path inside the chip.
    struct chip_side {
        const chip_group* g = nullptr;
        std::vector<std::string> idx;
        std::string inner;
    };
    std::optional<chip_side> parse_chip_side(const std::string& text, const source_location& where) const;
    /// The chip a chip side's indices (evaluated by `eval`) name.
    const platform& chip_at(const chip_side& s, const std::vector<int>& idx, const std::string& text,
                            const source_location& where) const;

    sim_context& m_sim;
    std::string m_title, m_description, m_validation, m_file;
    clock_domain m_clock;
    tick m_quantum = 0;
    double m_tdp = 0;
    std::vector<std::unique_ptr<component>> m_owned;
    std::vector<std::unique_ptr<platform>> m_chips;
    std::vector<group> m_groups;
    std::vector<std::uint32_t> m_top;
    /// attachment() of a component that is not connected itself: its owner's, if it has one.
    attach_point owner_attachment(std::uint32_t comp) const;
    std::vector<std::vector<attach_point>> m_attach;  // comp id -> per unit (size 1: whole component; 0: none)
    struct bridge {
        attach_point a, b;
    };
    std::vector<bridge> m_bridges;
    std::vector<std::vector<size_t>> m_net_bridges;  // network comp id -> its bridges
    void add_bridge(const bridge& b);
    mutable std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<route_segment>> m_routes;
    std::string m_prefix;  // parameter path prefix ("gpu." for a chip of a system)
    std::vector<chip_group> m_chip_groups;
    yaml_node m_mapper, m_parallel;
    yaml_node m_root;
    std::vector<std::pair<std::string, std::string>> m_parameters;
};

}  // namespace tessel
