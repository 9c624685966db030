#include "engine/serve/pareto.h"

namespace tessel::serve {

void mark_pareto(const std::vector<nlohmann::ordered_json*>& points, const char* flag) {
    auto rate = [](const nlohmann::ordered_json& p, const char* key) { return p[key].get<double>(); };
    for (nlohmann::ordered_json* a : points) {
        bool beaten = false;
        for (const nlohmann::ordered_json* b : points)
            beaten |= rate(*b, "tokens_per_s_per_user") > rate(*a, "tokens_per_s_per_user") &&
                      rate(*b, "output_tokens_per_s_per_chip") > rate(*a, "output_tokens_per_s_per_chip");
        (*a)[flag] = !beaten;
    }
}

}  // namespace tessel::serve
