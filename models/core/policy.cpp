#include "models/core/policy.h"

#include <algorithm>

namespace tessel {

std::vector<const policy_info*>& policy_catalog() {
    static std::vector<const policy_info*> all;
    return all;
}

std::vector<const policy_info*> sorted_policies() {
    std::vector<const policy_info*> out = policy_catalog();
    std::sort(out.begin(), out.end(), [](const policy_info* a, const policy_info* b) {
        return a->family != b->family ? a->family < b->family : a->name < b->name;
    });
    return out;
}

std::vector<std::string>& policy_registry_errors() {
    static std::vector<std::string> errors;
    return errors;
}

}  // namespace tessel
