// Arbitration on a mesh router, as a policy (models/core/policy.h): `flow_control: {impl: credit, arbitration:
// {impl: NAME}}` picks how each output port's switch allocator chooses one of the input virtual channels that
// request it in a cycle. Each implementation is one file pair in this folder that registers itself.
// Leaves out: virtual-channel allocation and the network interface's choice of VC (round robin in credit_flow),
// and separable or wavefront allocators that match all outputs at once (each output here grants on its own, in an
// order that rotates every cycle, and skips an input port another output has already served).
#pragma once

#include <cstdint>

#include "models/core/policy.h"
#include "models/core/units.h"

namespace tessel {

class arbitration_policy {
public:
    using family = arbitration_policy;
    static constexpr const char* family_name = "arbitration";
    virtual ~arbitration_policy() = default;

    /// Grants one of the requesters in `req` (bit i: input VC i of `n`, never empty). `rr` is this output's
    /// pointer (the requester to look at first), kept by the router and reset when the network drains; the
    /// policy moves it. `age[i]` is when requester i's packet reached its source (only filled when uses_age()).
    virtual std::uint32_t grant(std::uint64_t req, std::uint32_t n, std::uint8_t& rr, const tick* age) const = 0;
    /// Whether grant reads `age` (the router fills it only then).
    virtual bool uses_age() const { return false; }
};

}  // namespace tessel
