#include "engine/workload/generator_source.h"

#include "engine/workload/load.h"

namespace tessel {

namespace {

class generator_source final : public workload_source {
public:
    generator_source(std::string spec, const generator_info& gen, workload_params params, std::string name)
        : workload_source(std::move(spec)), m_gen(gen), m_params(std::move(params)), m_name(std::move(name)) {}

private:
    const generator_info& m_gen;  // an entry of generators(), which lives as long as the program
    workload_params m_params;     // declared, with the file's values; each build copies it and applies overrides
    std::string m_name;

    workload_graph build_graph(const workload_overrides& overrides) const override {
        workload_params params = m_params;
        params.apply_overrides(overrides.to_map());
        workload_graph g = run_generator(m_gen, params);
        if (!m_name.empty()) g.name = m_name;
        apply_workload_options(g, params);
        return g;
    }
};

}  // namespace

std::shared_ptr<const workload_source> make_generator_source(std::string spec, const generator_info& gen,
                                                             workload_params params, std::string name) {
    return std::make_shared<generator_source>(std::move(spec), gen, std::move(params), std::move(name));
}

}  // namespace tessel
