#include "engine/report/explain/explainer.h"

namespace tessel {

explainer_registry& explainer_registry::instance() {
    static explainer_registry r;
    return r;
}

bool explainer_registry::add(explainer_info e) {
    if (find(e.name)) {
        m_errors.push_back("explainer '" + e.name + "' is registered twice");
        return false;
    }
    m_explainers.push_back(std::move(e));
    return true;
}

const explainer_info* explainer_registry::find(const std::string& name) const {
    for (const auto& e : m_explainers)
        if (e.name == name) return &e;
    return nullptr;
}

std::vector<std::string> explainer_registry::names() const {
    std::vector<std::string> out;
    for (const auto& e : m_explainers) out.push_back(e.name);
    return out;
}

void explain_run(const std::string& mapper_name, const mapping& m, const platform& plat, const executor::result& r,
                 run_summary& s) {
    if (const explainer_info* e = explainer_registry::instance().find(mapper_name)) e->explain(m, plat, r, s);
}

bool explainer_reads_kernel_records(const std::string& mapper_name) {
    const explainer_info* e = explainer_registry::instance().find(mapper_name);
    return !e || e->reads_kernel_records;
}

}  // namespace tessel
