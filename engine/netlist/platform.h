// A platform: the SystemC module tree built from a platform YAML (components by kind from the registry,
// replicate grids, presets, --set overrides, connections by hierarchical path), plus the topology the
// executor routes over: which network port each component unit attaches to, and which network ports are
// bridged (chip-to-chip links). See docs/platform-yaml.md.
#pragma once

#include <systemc>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/program/program.h"
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
    platform(sc_core::sc_module_name name, const yaml_node& root, param_context& ctx, sim_context& sim);
    ~platform() override;

    /// Reads `path` and builds it; the module is named after the file's `platform:` key.
    static std::unique_ptr<platform> load(const std::string& path, param_context& ctx, sim_context& sim);

    const std::string& title() const { return m_title; }
    const std::string& description() const { return m_description; }
    const std::string& file() const { return m_file; }
    sim_context& sim() const { return m_sim; }
    const clock_domain& clock() const { return m_clock; }
    tick quantum() const { return m_quantum; }

    /// A named entry of `components:` (one component, or a replicate grid of them).
    struct group {
        std::string name;
        std::string kind;
        std::vector<std::string> dims;  // replicate dimension names (x, y) or empty
        std::vector<int> shape;         // replicate extents, empty when not replicated
        std::vector<std::uint32_t> ids;  // component ids, first dimension fastest
        source_location where;
    };
    const std::vector<group>& groups() const { return m_groups; }
    const group* find_group(const std::string& name) const;
    /// Groups whose components have a role, in file order.
    std::vector<const group*> groups_with(component::role r) const;

    /// A component by id: mutable for those who run the platform (the executor), read-only through a const
    /// platform (mappers plan on one and cannot change a component).
    component& comp(std::uint32_t id);
    const component& comp(std::uint32_t id) const;
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
            out = route(from, to);
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

    /// Every parameter's final value, as "path: value" lines (the resolved configuration).
    std::string resolved_yaml(const param_context& ctx) const;

private:
    void build_components(const yaml_node& comps, param_context& ctx);
    static std::pair<std::string, source_location> top_value_param(param_context& ctx, const yaml_node& params,
                                                                   const yaml_node::entry& e);
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
    };
    parsed_side parse_side(const std::string& text, const source_location& where) const;

    sim_context& m_sim;
    std::string m_title, m_description, m_file;
    clock_domain m_clock;
    tick m_quantum = 0;
    std::vector<std::unique_ptr<component>> m_owned;
    std::vector<group> m_groups;
    std::vector<std::uint32_t> m_top;
    /// attachment() of a component that is not connected itself: its owner's, if it has one.
    attach_point owner_attachment(std::uint32_t comp) const;
    std::vector<std::vector<attach_point>> m_attach;  // comp id -> per unit (size 1: whole component; 0: none)
    struct bridge {
        attach_point a, b;
    };
    std::vector<bridge> m_bridges;
    yaml_node m_mapper;
    yaml_node m_root;
    std::vector<std::pair<std::string, std::string>> m_parameters;
};

}  // namespace tessel
