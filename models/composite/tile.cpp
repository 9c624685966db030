#include "models/composite/tile.h"

#include <algorithm>
#include <cmath>

#include "models/compute/pe.h"
#include "models/core/registry.h"
#include "models/memory/sram_bank.h"

namespace tessel {

void tile::params::declare(param_decl& d) {
    d.part<pe::params>(compute, "pe", "pe", "the processing element (see `tessel describe pe`)");
    d.part<sram_bank::params>(scratchpad, "sram", "sram_bank", "the scratchpad (see `tessel describe sram_bank`)");
}

std::vector<stat_decl> tile::stat_table() { return {}; }  // its parts report their own

tile::tile(sc_core::sc_module_name n, const component_args& a) : component(n, a) {
    load_params(m_p, a);
    m_pe = make_part("pe", m_p.compute, a, role::compute);
    m_sram = make_part("sram", m_p.scratchpad, a, role::memory);
    if (!m_pe->unit_model())
        throw input_error("component '" + m_p.compute.config_path + "': kind '" + m_p.compute.kind +
                              "' cannot be a tile's processing element (it has no per-unit timing model)",
                          m_p.compute.kind_where);
    set_clock(m_pe->clock());
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
