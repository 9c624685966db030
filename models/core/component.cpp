#include "models/core/component.h"

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

const char* resource_class_name(resource_class c) {
    switch (c) {
        case resource_class::compute:
            return "compute";
        case resource_class::memory:
            return "memory";
        case resource_class::network:
            return "network";
        case resource_class::sync:
            return "sync";
    }
    return "?";
}

component::component(sc_core::sc_module_name n, const component_args& a)
    : sc_core::sc_module(n),
      in("in"),
      m_sim(a.sim),
      m_ledger(&a.sim->energy),
      m_kind(a.kind),
      m_index(a.index),
      m_stats(name(), kind_name(), a.kind ? &a.kind->stats : nullptr) {
    m_id = m_sim->add_component(this);
    m_sim->stats.add(&m_stats);
    in.register_b_transport(this, &component::b_transport);
    if (a.kind && !a.kind->stats.empty())
        m_stats.formula(energy_stat().name, [this](double sim_seconds) {
            std::vector<resource_usage> used;
            usage(used);
            double j = 0;
            for (const auto& u : used) j += u.dynamic_joules + u.static_watts * sim_seconds;
            return j;
        });
}

component::~component() { m_sim->remove_component(m_id); }

const std::string& component::kind_name() const {
    static const std::string none = "?";
    return m_kind ? m_kind->name : none;
}

const std::vector<memory_tier>& component::memory_tiers() const {
    static const std::vector<memory_tier> none;
    return none;
}

std::unique_ptr<component> component::make_part(const char* name, const part_spec& s, const component_args& a,
                                                role needs) {
    const kind_info& k = kind_registry::instance().require(s.kind, s.kind_where);
    component_args sub;
    sub.sim = a.sim;
    sub.kind = &k;
    sub.params = s.params;
    sub.ctx = a.ctx;
    sub.config_path = s.config_path;
    sub.preset = s.preset.empty() ? nullptr : &k.require_preset(s.preset, s.preset_where).values;
    sub.index = a.index;
    sub.where = s.where;
    sub.part = true;
    static const char* const what[] = {"compute", "memory", "interconnect", "sync", "composite"};
    const auto refuse = [&] {
        throw input_error("component '" + s.config_path + "': kind '" + s.kind + "' cannot be this part (it is not a " +
                              what[static_cast<int>(needs)] + " component)",
                          s.kind_where);
    };
    // The kind's category answers before its parameters are read (a composite may still have the role).
    if (k.category != what[static_cast<int>(needs)] && k.category != "composite") refuse();
    std::unique_ptr<component> c(k.make(name, sub));
    if (!c->has_role(needs)) refuse();
    // An owner paces its traffic by its memory's peak bandwidth: a memory part has to declare one.
    if (needs == role::memory && c->peak_bytes_per_second() <= 0)
        throw input_error("component '" + s.config_path + "': kind '" + s.kind +
                              "' cannot be this part (a memory part needs a peak bandwidth)",
                          s.kind_where);
    c->set_owner(this);
    return c;
}

std::uint32_t component::unit_count() const {
    std::uint32_t n = 1;
    for (int d : unit_shape()) n *= static_cast<std::uint32_t>(d);
    return n;
}

std::string component::unit_suffix(std::uint32_t unit) const {
    const std::vector<int> shape = unit_shape();
    if (shape.empty()) return {};
    std::vector<int> coords(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
        coords[i] = static_cast<int>(unit % static_cast<std::uint32_t>(shape[i]));
        unit /= static_cast<std::uint32_t>(shape[i]);
    }
    std::string s = "[";
    for (size_t i = 0; i < coords.size(); ++i) s += (i ? "," : "") + std::to_string(coords[i]);
    return s + "]";
}

int component::unit_at(const std::vector<int>& coords) const {
    const std::vector<int> shape = unit_shape();
    if (shape.empty()) return coords.empty() || (coords.size() == 1 && coords[0] == 0) ? 0 : -1;
    if (coords.size() != shape.size()) return -1;
    int idx = 0, stride = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (coords[i] < 0 || coords[i] >= shape[i]) return -1;
        idx += coords[i] * stride;
        stride *= shape[i];
    }
    return idx;
}

int component::trace_track(const std::string& sub) const {
    const std::string full = sub.empty() ? path() : path() + "." + sub;
    // One Perfetto process per top-level component (the replica for replicated ones).
    const component* top = this;
    while (top->m_owner) top = top->m_owner;
    return m_sim->trace.track(top->path(), full);
}

tick component::now() const { return sc_core::sc_time_stamp().value(); }

void component::b_transport(int /*from*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    txn* t = gp.get_extension<txn>();
    if (!t) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    transport(*t);
    (void)delay;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void send(tlm::tlm_fw_transport_if<>& target, tlm::tlm_generic_payload& gp, txn& t, tick now) {
    sc_core::sc_time delay = sc_core::sc_time::from_value(t.head > now ? t.head - now : 0);
    target.b_transport(gp, delay);
    (void)t;
}

txn_payload::txn_payload() {
    m_gp.set_command(tlm::TLM_IGNORE_COMMAND);
    m_gp.set_data_ptr(nullptr);
    m_gp.set_data_length(0);
    m_gp.set_extension(&m_txn);
}

txn_payload::~txn_payload() { m_gp.clear_extension(&m_txn); }

}  // namespace tessel
