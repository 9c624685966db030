#include "models/interconnect/arbitration/oldest_first.h"

namespace tessel {

std::uint32_t oldest_first_arbitration::grant(std::uint64_t req, std::uint32_t n, std::uint8_t& rr,
                                              const tick* age) const {
    std::uint32_t best = n;
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t i = (rr + k) % n;
        if (((req >> i) & 1) && (best == n || age[i] < age[best])) best = i;
    }
    rr = static_cast<std::uint8_t>((best + 1) % n);
    return best;
}

TESSEL_REGISTER_POLICY(make_policy<oldest_first_arbitration>(
    "oldest_first", "the requester whose packet reached its source first; ties in round-robin order"));

}  // namespace tessel
