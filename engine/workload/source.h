// A workload source: what a workload spec names (a generator with its parameters, a YAML graph, an ONNX model),
// read and parsed once, from which graphs are built at any overrides. A serving or system run builds the same
// model at many batch sizes, sequence lengths or layer counts from one source, with no file read or re-parse.
#pragma once

#include <memory>
#include <string>

#include "engine/workload/graph.h"
#include "engine/workload/overrides.h"

namespace tessel {

class workload_source : public std::enable_shared_from_this<workload_source> {
public:
    virtual ~workload_source() = default;
    /// The graph at `overrides`, finished as load_workload returns it (shapes checked, costed, training and fuse
    /// carried out, parameters resolved), holding this source. An override no parameter takes is an input_error
    /// with a did-you-mean, as on the command line.
    workload_graph build(const workload_overrides& overrides) const;
    /// The spec it was made from (a built-in name or a path), as given.
    const std::string& spec() const { return m_spec; }

protected:
    explicit workload_source(std::string spec) : m_spec(std::move(spec)) {}
    /// The kind's own build: the graph with the common options (training, fuse) applied.
    virtual workload_graph build_graph(const workload_overrides& overrides) const = 0;

private:
    std::string m_spec;
};

/// Reads `spec` once: a .yaml/.yml workload, an .onnx model, a SCALE-Sim topology (.csv), a workloads/ file by
/// name or a generator name. Errors (no such workload, a file that does not parse) are those load_workload gives.
std::shared_ptr<const workload_source> make_workload_source(const std::string& spec);

}  // namespace tessel
