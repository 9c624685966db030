// Builds a workload graph op by op, with output shapes inferred as each op is added: the API the model
// generators use, and the final step every loader shares (finalize_graph).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/workload/graph.h"
#include "engine/workload/shape_inference.h"

namespace tessel {

/// Attributes of an op being built: i = one whole number, is = a list, f = a real number, s = a word.
struct op_attrs {
    std::map<std::string, std::vector<std::int64_t>> ints;
    std::map<std::string, double> numbers;
    std::map<std::string, std::string> texts;

    op_attrs& i(const std::string& name, std::int64_t v) {
        ints[name] = {v};
        return *this;
    }
    op_attrs& is(const std::string& name, std::vector<std::int64_t> v) {
        ints[name] = std::move(v);
        return *this;
    }
    op_attrs& f(const std::string& name, double v) {
        numbers[name] = v;
        return *this;
    }
    op_attrs& s(const std::string& name, std::string v) {
        texts[name] = std::move(v);
        return *this;
    }
};

class graph_builder {
public:
    /// `precision` is the type of floating-point tensors and the compute type of every op.
    graph_builder(std::string name, dtype precision, source_location where = {});

    int input(const std::string& name, shape_t shape, std::optional<dtype> type = std::nullopt);
    int weight(const std::string& name, shape_t shape);
    /// Persistent non-parameter data: batchnorm statistics, KV caches, solver vectors.
    int state(const std::string& name, shape_t shape, std::optional<dtype> type = std::nullopt);
    /// Data fixed at build time (position ids, masks, stencil coefficients): costs nothing to produce.
    int constant(const std::string& name, shape_t shape, std::optional<dtype> type = std::nullopt);

    /// Adds an op of catalog type `type` named `name`; its outputs are named `name` (one output) or
    /// `name.0`, `name.1`, ... and get their inferred shapes. Returns the output tensor indices.
    std::vector<int> add(const std::string& type, const std::string& name, std::vector<int> inputs,
                         const op_attrs& attrs = {}, int outputs = 1);
    /// add() for the usual single-output op.
    int add1(const std::string& type, const std::string& name, std::vector<int> inputs, const op_attrs& attrs = {});

    const tensor_info& tensor(int t) const { return m_g.tensor(t); }
    const shape_t& shape(int t) const { return m_g.tensor(t).shape; }
    dtype precision() const { return m_precision; }
    workload_graph& graph() { return m_g; }

    /// Marks unconsumed results as graph outputs, fills costs and checks the graph; the builder is spent.
    workload_graph finish();

private:
    int new_tensor(const std::string& name, shape_t shape, dtype type, tensor_role role);

    workload_graph m_g;
    dtype m_precision;
    source_location m_where;
};

/// The last step of every loader: produced tensors nobody reads become
/// graph outputs (unless some tensor already has that role), costs are computed and the graph is checked
/// to be acyclic. Throws input_error naming a cycle.
void finalize_graph(workload_graph& g, dtype precision);

}  // namespace tessel
