// `tile`: the composite building block of a spatial accelerator: a processing element (`pe`), its scratchpad
// (`sram`, a sram_bank) and a port where it attaches to a network. It reaches its parts through TLM sockets.
// A compute step runs on the pe while its operand bytes stream from the sram (the slower of the two decides);
// transfers into or out of the tile go to its sram.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <memory>

#include "models/compute/pe.h"
#include "models/memory/sram_bank.h"

namespace tessel {

class tile : public component {
public:
    struct params {
        pe::params compute;     // YAML: pe
        sram_bank::params scratchpad;  // YAML: sram
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    tile(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::composite || r == role::compute || r == role::memory; }
    std::uint64_t capacity_bytes() const override { return m_p.scratchpad.capacity.bytes(); }
    void transport(txn& t) override;
    std::vector<double> unit_busy() const override { return m_pe->unit_busy(); }

    class pe& compute_unit() { return *m_pe; }
    const compute_model* unit_model() const override { return &m_pe->model(); }
    sram_bank& memory() { return *m_sram; }

private:
    params m_p;
    std::unique_ptr<class pe> m_pe;
    std::unique_ptr<sram_bank> m_sram;
    tlm_utils::simple_initiator_socket<tile> m_to_pe{"to_pe"};
    tlm_utils::simple_initiator_socket<tile> m_to_sram{"to_sram"};
    txn_payload m_operands;
};

}  // namespace tessel
