// `arbitration: {impl: round_robin}`: the first requester at or after the pointer wins, and the pointer moves
// just past it, so every waiting VC is served within n grants. Ignores age.
#pragma once

#include "models/interconnect/arbitration/arbitration_policy.h"

namespace tessel {

class round_robin_arbitration final : public arbitration_policy {
public:
    std::uint32_t grant(std::uint64_t req, std::uint32_t n, std::uint8_t& rr, const tick* age) const override;
};

}  // namespace tessel
