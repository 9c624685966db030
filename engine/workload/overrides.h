// Typed workload overrides: what `--set workload.KEY=VALUE` and the system mapper change in a workload (batch,
// sequence length, KV-cache length, layer count, tensor-parallel split, training options). The command line's
// strings are converted once, at the edge (parse_workload_overrides); a caller that changes one number sets one
// field instead of writing a string for the workload to parse again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tessel {

struct workload_overrides {
    std::optional<std::int64_t> batch;      // sequences or samples per step
    std::optional<std::int64_t> seq;        // tokens per sequence
    std::optional<std::int64_t> kv_cache;   // tokens already in the KV cache (llama)
    std::optional<std::int64_t> layers;     // repeated blocks
    std::optional<std::int64_t> tp;         // tensor-parallel ways the generator splits layers
    std::optional<bool> sequence_parallel;  // with tp: layer norms and dropout split along the sequence
    std::optional<bool> fuse;               // elementwise fusion pass
    std::optional<std::string> training;    // none, sgd or adam (checked by the workload, as a choice)
    /// Any other parameter (hidden, precision, a symbolic ONNX dimension) and a typed key whose text is not a
    /// plain number (an expression such as "2 * heads"), exactly as given.
    std::map<std::string, std::string> other;

    /// KEY -> VALUE as the workload's parameters take them; a typed field is written as its plain number, which
    /// is the text it was parsed from (only round-tripping text is typed).
    std::map<std::string, std::string> to_map() const;
};

/// The `--set workload.KEY=VALUE` pairs (KEY without the prefix) as typed overrides. Nothing is checked here: a
/// key that no parameter has is refused by the workload when it is built, with the same message as ever.
workload_overrides parse_workload_overrides(const std::map<std::string, std::string>& text);

}  // namespace tessel
