// One router of a mesh_noc built as modules (representation: modules): a sc_module with a TLM target socket.
// The mesh hands it a packet whose head has reached it; it reserves its own output link towards the
// destination (as the mesh's routing policy says) with the same rule (link_hop) that the data-oriented
// representation applies to its arrays, so both give identical timings, and says where the head goes next.
// Used for small meshes, teaching and the equivalence test.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <memory>

#include "models/core/reservation.h"
#include "models/core/transaction.h"

namespace tessel {

class mesh_noc;

class mesh_router : public sc_core::sc_module {
public:
    /// Packets from the four neighbours and from the network interface.
    tlm_utils::multi_passthrough_target_socket<mesh_router, 32, tlm::tlm_base_protocol_types, 0,
                                               sc_core::SC_ZERO_OR_MORE_BOUND>
        in;

    mesh_router(sc_core::sc_module_name name, mesh_noc& noc, int x, int y);

    std::array<reservation, 5> links;
    std::array<double, 5> link_bytes{};
    std::array<int, 5> tracks{-2, -2, -2, -2, -2};

private:
    void b_transport(int from, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    mesh_noc& m_noc;
    int m_x, m_y;
};

}  // namespace tessel
