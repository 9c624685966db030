// Explainers: after a run, one per mapper family adds what that execution style explains best to the summary
// (time per superstep split into compute, sync and exchange; per pipeline section; predicted against simulated
// cycles; per chip of a system), as notes and as `summary.details`. An explainer reads the mapping (its program
// and the family's typed record, mapping::record) and the run's step times; the mapper that planned it is not
// needed, so planning stays a pure function and reporting stays in the report layer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/report/summary.h"
#include "models/core/registry.h"

namespace tessel {

/// One registered explainer; why: a registry keyed by the mapper's name keeps the report layer open to new
/// mapper families without a switch on their names.
struct explainer_info {
    std::string name;  // the mapper's registered name
    std::function<void(const mapping&, const platform&, const executor::result&, run_summary&)> explain;
    /// Whether explain reads the kernel devices' per-kernel records; when not, the run does not keep them.
    bool reads_kernel_records = true;
};

/// The explainers by mapper name; a duplicate name is an error (reported like the mappers' registry).
class explainer_registry {
public:
    static explainer_registry& instance();
    bool add(explainer_info e);
    const explainer_info* find(const std::string& name) const;
    std::vector<std::string> names() const;
    const std::vector<std::string>& errors() const { return m_errors; }

private:
    std::vector<explainer_info> m_explainers;
    std::vector<std::string> m_errors;
};

/// Explains a run mapped by the mapper registered as `mapper_name`; a mapper without an explainer adds nothing.
void explain_run(const std::string& mapper_name, const mapping& m, const platform& plat, const executor::result& r,
                 run_summary& s);

/// Whether the explainer of `mapper_name` reads the kernel devices' per-kernel records (true when it has none:
/// the run keeps them, as it always did).
bool explainer_reads_kernel_records(const std::string& mapper_name);

}  // namespace tessel

#define TESSEL_REGISTER_EXPLAINER(...)                                           \
    static const bool TESSEL_CONCAT(tessel_explainer_registered_, __COUNTER__) = \
        ::tessel::explainer_registry::instance().add(__VA_ARGS__)
