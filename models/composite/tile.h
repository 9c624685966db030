// `tile`: the composite building block of a spatial accelerator: a processing element (`pe`), its scratchpad
// (`sram`) and a port where it attaches to a network. Both are parts built through the kind registry (a pe and
// a sram_bank unless their `kind:` names another compute or memory kind), reached through TLM sockets.
// A compute step runs on the pe while its operand bytes stream from the sram (the slower of the two decides);
// transfers into or out of the tile go to its sram.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <memory>

#include "models/core/component.h"

namespace tessel {

class tile : public component {
public:
    struct params {
        part_spec compute;     // YAML: pe
        part_spec scratchpad;  // YAML: sram
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    tile(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::composite || r == role::compute || r == role::memory; }
    std::uint64_t capacity_bytes() const override { return m_sram->capacity_bytes(); }
    void transport(txn& t) override;
    std::vector<double> unit_busy() const override { return m_pe->unit_busy(); }

    const compute_model* unit_model() const override { return m_pe->unit_model(); }

private:
    params m_p;
    std::unique_ptr<component> m_pe;
    std::unique_ptr<component> m_sram;
    tlm_utils::simple_initiator_socket<tile> m_to_pe{"to_pe"};
    tlm_utils::simple_initiator_socket<tile> m_to_sram{"to_sram"};
    txn_payload m_operands;
};

}  // namespace tessel
