#include "models/composite/tile.h"

#include <algorithm>
#include <cmath>

#include "models/core/registry.h"

namespace tessel {

void tile::params::declare(param_decl& d) {
    d.group(compute, "pe", "the processing element (see `tessel describe pe`)");
    d.group(scratchpad, "sram", "the scratchpad (see `tessel describe sram_bank`)");
}

std::vector<stat_decl> tile::stat_table() { return {}; }  // its parts report their own

tile::tile(sc_core::sc_module_name n, const component_args& a) : component(n, a) {
    load_params(m_p, a);
    component_args sub = a;
    sub.config_path = a.config_path + ".pe";
    sub.kind = kind_registry::instance().find("pe");
    m_pe = std::make_unique<class pe>("pe", sub, m_p.compute);
    sub.config_path = a.config_path + ".sram";
    sub.kind = kind_registry::instance().find("sram_bank");
    m_sram = std::make_unique<sram_bank>("sram", sub, m_p.scratchpad);
    m_pe->set_owner(this);
    m_sram->set_owner(this);
    set_clock(m_p.compute.clock);
    m_to_pe.bind(m_pe->in);
    m_to_sram.bind(m_sram->in);
}

void tile::transport(txn& t) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (t.kind != txn_kind::compute) {
        borrowed_payload p(t);
        m_to_sram->b_transport(p.gp(), delay);
        return;
    }
    // The datapath and the operand stream run together; the step ends when both are done.
    {
        borrowed_payload p(t);
        m_to_pe->b_transport(p.gp(), delay);
    }
    const double bytes = t.w ? t.w->local_bytes() : 0.0;
    if (bytes > 0) {
        txn& o = m_operands.ext();
        o.kind = txn_kind::read;
        o.unit = 0;
        o.address = 0;
        o.bytes = static_cast<std::uint64_t>(std::ceil(bytes));
        o.head = t.head;
        o.tail = t.head;
        o.op = t.op;
        o.step = t.step;
        m_to_sram->b_transport(m_operands.gp(), delay);
        t.tail = std::max(t.tail, o.tail);
    }
}

TESSEL_REGISTER_KIND(
    make_kind<tile>("tile", "composite",
                    "a processing element plus its scratchpad and a network port; compute overlaps its "
                    "operand stream from the scratchpad"));

}  // namespace tessel
