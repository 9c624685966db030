#include "models/interconnect/arbitration/round_robin.h"

namespace tessel {

std::uint32_t round_robin_arbitration::grant(std::uint64_t req, std::uint32_t n, std::uint8_t& rr,
                                             const tick* /*age*/) const {
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t i = (rr + k) % n;
        if (!((req >> i) & 1)) continue;
        rr = static_cast<std::uint8_t>((i + 1) % n);
        return i;
    }
    return n;  // unreachable: req is never empty
}

TESSEL_REGISTER_POLICY(make_policy<round_robin_arbitration>(
    "round_robin", "the first requester at or after a rotating pointer; the pointer moves past the winner"));

}  // namespace tessel
