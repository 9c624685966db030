// `flow_control: {impl: ideal}`: each link is a busy-until reservation and buffers are unbounded; mesh_noc moves
// the packets itself (both representations). Leaves out: back-pressure and head-of-line blocking.
#pragma once

#include "models/interconnect/flow_control/flow_control_policy.h"

namespace tessel {

class ideal_flow_control final : public flow_control_policy {
public:
    std::unique_ptr<noc_flow_engine> make_engine(mesh_noc&, const component_args&) const override { return nullptr; }
};

}  // namespace tessel
