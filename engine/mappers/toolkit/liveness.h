// Which storage a tensor's data is in, and how many reads of that storage are left, for mappers that free a
// tensor after its last reader. A tensor starts as its own storage, with one read left per op that reads it;
// a weight stored in another layout (alias_of) is the storage of the tensor it is a layout of. A view's outputs
// (is_view) are their source's data: they share its storage, and their readers keep it alive. A mapper that
// runs an op in another's epilogue shares that op's output with the host's the same way. A mapper calls
// read_inputs after every op, views included (a view reads its source once, like any reader).
#pragma once

#include <cstddef>
#include <vector>

#include "engine/workload/graph.h"

namespace tessel::toolkit {

class tensor_liveness {
public:
    explicit tensor_liveness(const workload_graph& g);

    /// The tensor whose storage holds `t`'s data.
    int root(int t) const { return m_root[static_cast<size_t>(t)]; }
    /// `t` is `of`'s data: it shares of's storage, and t's readers count against it.
    void share(int t, int of);
    /// Reads of `root`'s storage still to come.
    size_t reads_left(int root) const { return m_left[static_cast<size_t>(root)]; }

    /// One read of every input of `op` is done (an input read twice counts twice); calls `last(root)` after each
    /// input whose storage has no read left (a mapper's release must not mind being told twice).
    template <class F>
    void read_inputs(const op_node& op, F last) {
        for (int t : op.inputs) read(t, last);
    }

    /// One read of `t` (a mapper that releases a kernel's inputs when the kernel closes, not op by op): calls
    /// `last(root)` when its storage has no read left.
    template <class F>
    void read(int t, F last) {
        const int r = root(t);
        size_t& left = m_left[static_cast<size_t>(r)];
        if (left > 0) --left;
        if (left == 0) last(r);
    }

private:
    const workload_graph& m_g;
    std::vector<int> m_root;
    std::vector<size_t> m_left;
};

}  // namespace tessel::toolkit
