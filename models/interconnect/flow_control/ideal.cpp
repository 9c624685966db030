#include "models/interconnect/flow_control/ideal.h"

namespace tessel {

TESSEL_REGISTER_POLICY(make_policy<ideal_flow_control>("ideal", "busy-until links, unbounded buffers"));

}  // namespace tessel
