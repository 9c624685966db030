#include "engine/workload/source.h"

namespace tessel {

workload_graph workload_source::build(const workload_overrides& overrides) const {
    workload_graph g = build_graph(overrides);
    g.origin = shared_from_this();
    g.overrides = overrides;
    return g;
}

}  // namespace tessel
