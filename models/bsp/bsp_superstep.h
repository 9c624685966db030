// One superstep of a bulk-synchronous IPU program in coarse form: each tile's exchange traffic as totals and its
// compute step, carried by one program step that ipu_tiles runs with its chip's ipu_exchange, instead of one step
// per message and per tile. A whole model's fine program has tens of millions of messages; this form has one step
// per superstep. What it keeps of the fine form: every tile's receive side serves its bytes at the tile
// bandwidth after the exchange latency, no sooner than its busiest sender can send them, and every send side its
// bytes once per multicast; SRAM ports, compute, statistics, energy and trace slices as the fine form charges them.
// What it loses: the order of messages inside a phase (a receiver may in the fine form wait on a sender that is
// busy with others first, or start its compute on part of its data). tests/ipu/coarse_slow_test.cpp measures the
// difference on small cases.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/step_payload.h"
#include "models/core/transaction.h"

namespace tessel {

struct bsp_superstep final : step_payload {
    static constexpr type payload_type_tag = type::bsp_superstep;
    bsp_superstep() : step_payload(type::bsp_superstep) {}

    /// What one tile does in the superstep.
    struct tile_share {
        std::uint32_t tile = 0;
        std::uint32_t work = ~0u;          // index into works of its compute step; ~0u: it only exchanges
        double recv_bytes = 0;             // payload bytes it receives
        double send_bytes = 0;             // payload bytes it sends (a multicast once)
        double sender_bytes = 0;           // bytes of its busiest sender (the one that sends the most in the phase)
        std::uint32_t recv_packets = 0;    // packets it receives (each pays the exchange's header)
        std::uint32_t send_packets = 0;    // packets it sends (a multicast once)
        std::uint32_t sender_packets = 0;  // packets of its busiest sender
    };
    std::vector<tile_share> tiles;  // in the order the mapper emitted them
    std::vector<work> works;        // the distinct compute steps
};

}  // namespace tessel
