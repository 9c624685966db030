#include "engine/mappers/toolkit/liveness.h"

namespace tessel::toolkit {

tensor_liveness::tensor_liveness(const workload_graph& g) : m_g(g) {
    const size_t nt = g.tensors().size();
    m_root.resize(nt);
    m_left.resize(nt);
    for (size_t t = 0; t < nt; ++t) {
        m_root[t] = static_cast<int>(t);
        m_left[t] = g.tensors()[t].consumers.size();
    }
    // Weights stored in another layout, in tensor order (a layout of a layout resolves to the first).
    for (size_t t = 0; t < nt; ++t) {
        const tensor_info& ti = g.tensors()[t];
        if (ti.alias_of >= 0 && ti.producer < 0) m_root[t] = root(ti.alias_of);
    }
}

void tensor_liveness::share(int t, int of) {
    const int r = root(of);
    m_root[static_cast<size_t>(t)] = r;
    m_left[static_cast<size_t>(r)] += m_g.tensor(t).consumers.size();
}

}  // namespace tessel::toolkit
