// Calibration of a kernel device (gpu, tpu) against measured kernel times (`tessel calibrate`).
// Measurements are JSON lines as scripts/measure_gpu.py writes them (validation/gpu/README.md): a device row,
// then one row per kernel: gemm, copy, elementwise, rowwise, sdpa (Sq < S: decode-shaped), conv (NHWC), each with its
// shape and the measured seconds of one kernel replayed from a CUDA graph. Each is simulated the way `tessel run` would
// run that op: the op is built as a one-op workload graph, lowered by the kernels mapper's lower_op(), and run on the
// platform's device through the executor with the device's caches as the replay before would have left them (the
// benchmark replays each kernel back to back), so the simulated time is the model's, not a separate formula. The fit
// changes only the device's tunables (launch overhead, achievable fractions, latencies), minimising the mean absolute
// percentage error by coordinate descent (golden-section search per parameter, repeated until nothing improves); the
// launch overhead, which adds to every kernel, is placed optimally after each step (a weighted median).
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "engine/workload/graph.h"
#include "models/baseline/kernel_device.h"

namespace tessel {

class platform;
class executor;
class sim_context;
class param_context;

struct measurement {
    std::string kind;      // gemm, copy, elementwise, rowwise, sdpa
    std::string label;     // "gemm bf16 4096x4096x4096"
    nlohmann::json row;    // the JSON line as read
    double seconds = 0;    // measured time of one kernel
    int line = 0;          // line in the file
    std::string file;      // the file it came from
    bool holdout = false;  // "holdout": true in the row: never fitted, reported as held out
    /// Copies and elementwise ops moving at least min_memory_bound_bytes: their bytes take several times the
    /// fixed launch overhead, so bandwidth sets their time (the set the 15 % check applies to). Smaller ones
    /// are launch-bound.
    bool memory_bound() const;
    /// The kernel class the report groups errors by: "gemm bf16", "gemm bf16 unaligned", "gemm fp32",
    /// "rowwise softmax", "sdpa decode", "conv", "copy", "elementwise".
    std::string kernel_class() const;
    static constexpr double min_memory_bound_bytes = 16.0 * 1024 * 1024;
};

struct measurement_set {
    std::string file;
    nlohmann::json device;  // the device row, if any
    std::vector<measurement> items;
};

/// Reads a measurements file; a malformed line is an input_error naming file and line.
measurement_set load_measurements(const std::string& path);
/// Reads several files into one set (the device row of the first that has one).
measurement_set load_measurements(const std::vector<std::string>& paths);

/// Mean absolute percentage error of `sim` against the measurements at `which` (all when empty), in percent.
double mape(const std::vector<measurement>& ms, const std::vector<double>& sim, const std::vector<size_t>& which = {});

class calibrator {
public:
    /// Loads the platform (with --set style overrides) and finds its kernel device.
    calibrator(const std::string& platform_path, const std::vector<std::string>& sets = {});
    ~calibrator();

    /// Simulated seconds of one kernel of `m` with the device's current parameters.
    double simulate(const measurement& m);
    std::vector<double> simulate_all(const std::vector<measurement>& ms);
    /// The plan and bound the device chose for `m` in the last simulate() of it.
    const kernel_record& last_record() const { return m_last; }

    /// Fits the tunables (those named in `only`, all when empty) to the measurements at `use`; progress lines
    /// go to `log` when given. A name that is not a tunable is an input_error.
    void fit(const std::vector<measurement>& ms, const std::vector<size_t>& use, std::ostream* log,
             const std::vector<std::string>& only = {});

    std::vector<tunable>& tunables() { return m_tunables; }
    /// The device component's group name in the platform ("gpu").
    const std::string& device_group() const { return m_device_group; }
    kernel_device& device() { return *m_device; }
    const std::string& platform_file() const { return m_platform_file; }

private:
    struct prepared;
    const prepared& prepare(const measurement& m);

    std::string m_platform_file;
    std::unique_ptr<sim_context> m_sim;
    std::unique_ptr<param_context> m_ctx;
    std::unique_ptr<platform> m_plat;
    std::unique_ptr<executor> m_exec;
    kernel_device* m_device = nullptr;
    std::uint32_t m_device_id = 0;
    std::string m_device_group;
    std::vector<tunable> m_tunables;
    std::vector<std::unique_ptr<prepared>> m_prepared;  // by measurement label
    kernel_record m_last;
};

/// The platform text with the fitted values of `device_group`'s tunables written in place (under its params),
/// and a provenance comment block (measurements file, date, errors) replacing any earlier one.
std::string write_fitted_platform(const std::string& text, const std::string& device_group,
                                  const std::vector<std::pair<std::string, std::string>>& values,
                                  const std::vector<std::string>& provenance);

}  // namespace tessel
