// The parameters of a workload: batch, sequence length, precision, generator sizes. A YAML workload declares
// them with defaults, a generator declares them with documentation, an ONNX model has one per symbolic
// dimension; `--set workload.NAME=VALUE` overrides them, and an override that matches none is an error.
// Values may be expressions over other parameters ("4 * hidden").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/core/dtype.h"
#include "models/core/error.h"

namespace tessel {

struct workload_param {
    std::string name;
    std::string value;  // as written or overridden
    std::string doc;
    source_location where;
    bool overridden = false;  // by --set
    bool user = false;        // given by the workload file or --set (not a default)
};

class workload_params {
public:
    explicit workload_params(std::string workload_name = {}) : m_workload(std::move(workload_name)) {}

    /// Declares a parameter (or replaces the value of a declared one, keeping its documentation).
    void declare(const std::string& name, const std::string& value, const std::string& doc = {},
                 const source_location& where = {});
    /// Sets a declared parameter from the workload file; an unknown name is an input_error at `where`.
    void set_user(const std::string& name, const std::string& value, const source_location& where);
    /// The parameters every workload has: precision, training, fuse.
    void declare_common();
    bool has(const std::string& name) const;
    const workload_param* find(const std::string& name) const;
    std::vector<std::string> names() const;

    /// Applies --set workload.KEY=VALUE overrides (KEY without the prefix). A key no parameter has is an
    /// input_error with a did-you-mean and the list of parameters.
    void apply_overrides(const std::map<std::string, std::string>& overrides);

    const std::string& text(const std::string& name) const;
    double number(const std::string& name) const;
    std::int64_t integer(const std::string& name) const;
    /// A whole number of at least `min`.
    std::int64_t positive(const std::string& name, std::int64_t min = 1) const;
    /// A count of at least `min` that repeats part of the graph (layers, iterations, experts), each repeat adding
    /// at least `ops_each` ops or tensors: refused up front, at the parameter, when the graph would be over the ops
    /// limit, so a huge value fails at once, naming itself, instead of after half a million ops have been built.
    std::int64_t repeats(const std::string& name, double ops_each, std::int64_t min = 1) const;
    bool boolean(const std::string& name) const;
    dtype precision() const;
    /// One of `choices`, else an input_error listing them.
    std::string choice(const std::string& name, const std::vector<std::string>& choices) const;

    /// Evaluates `text` (a number or an expression over the parameters); `what` names it in errors.
    double eval(const std::string& text, const source_location& where, const std::string& what) const;
    /// True when `text` is an expression that names a parameter (so it is worth evaluating).
    bool names_parameter(const std::string& text) const;

    /// name -> value, for the resolved configuration written with every run.
    std::map<std::string, std::string> resolved() const;
    const std::string& workload() const { return m_workload; }

private:
    [[noreturn]] void bad(const workload_param& p, const std::string& what) const;
    double number_of(const workload_param& p, int depth) const;

    std::string m_workload;
    std::vector<workload_param> m_params;
};

}  // namespace tessel
