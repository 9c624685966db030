#include "engine/mappers/mapper.h"

#include <algorithm>

#include "models/core/registry.h"

namespace tessel {

mapper_registry& mapper_registry::instance() {
    static mapper_registry r;
    return r;
}

bool mapper_registry::add(mapper_info m) {
    if (find(m.name)) {
        m_errors.push_back("mapper '" + m.name + "' is registered twice");
        return false;
    }
    m_mappers.push_back(std::move(m));
    return true;
}

const mapper_info* mapper_registry::find(const std::string& name) const {
    for (const auto& m : m_mappers)
        if (m.name == name) return &m;
    return nullptr;
}

std::vector<std::string> mapper_registry::names() const {
    std::vector<std::string> out;
    for (const auto& m : m_mappers) out.push_back(m.name);
    // By name, not by registration: the order of static initialisation across translation units is the link's.
    std::sort(out.begin(), out.end());
    return out;
}

std::unique_ptr<mapper> create_mapper(const platform& plat, param_context& ctx, const std::string& path) {
    const yaml_node& spec = plat.mapper_spec();
    if (!spec.defined())
        throw input_error("platform '" + plat.title() +
                              "' has no 'mapper:' section, so it can run programs (--program) "
                              "but not workloads; add e.g. 'mapper: {impl: mesh}'",
                          source_location{plat.file(), 0, 0});
    spec.expect_map("mapper");
    std::string impl;
    if (const auto* o = ctx.find_override(path + ".impl"))
        impl = o->text;
    else if (spec.has("impl"))
        impl = spec["impl"].scalar(path + ".impl");
    else
        throw input_error(
            "mapper: needs 'impl:' naming the mapper; mappers: " + join(mapper_registry::instance().names()),
            spec.where());
    const mapper_info* info = mapper_registry::instance().find(impl);
    if (!info)
        throw input_error("unknown mapper '" + impl + "'" + did_you_mean(impl, mapper_registry::instance().names()) +
                              "; mappers: " + join(mapper_registry::instance().names()),
                          spec.has("impl") ? spec["impl"].where() : spec.where());
    ctx.record(path + ".impl", impl);
    param_decl d(spec, &ctx, path, "mapper '" + impl + "'");
    d.allow("impl");
    std::unique_ptr<mapper> m = info->make(d);
    m->set_name(info->name);
    m->configure(plat, ctx);
    return m;
}

}  // namespace tessel
