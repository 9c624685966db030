// `arbitration: {impl: oldest_first}`: age-based arbitration. The requester whose packet reached its source
// earliest wins (a global age, as if every flit carried its packet's injection time); a tie goes to the first in
// round-robin order from the pointer, which then moves past the winner. Old packets are not starved by new ones,
// but a stream of older packets can hold off a younger one for as long as it lasts.
// Leaves out: the cost of carrying and comparing timestamps (no extra router cycle).
#pragma once

#include "models/interconnect/arbitration/arbitration_policy.h"

namespace tessel {

class oldest_first_arbitration final : public arbitration_policy {
public:
    std::uint32_t grant(std::uint64_t req, std::uint32_t n, std::uint8_t& rr, const tick* age) const override;
    bool uses_age() const override { return true; }
};

}  // namespace tessel
