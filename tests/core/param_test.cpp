// Parameters declared once: describe mode lists them, load mode reads YAML strictly with overrides, presets and
// defaults, and records the resolved values; the kind registry refuses duplicates.
#include <gtest/gtest.h>

#include "models/core/param.h"
#include "models/core/registry.h"

using namespace tessel;

namespace {
struct demo_params {
    frequency clock;
    duration latency;
    bandwidth bw;
    byte_size size;
    std::int64_t count = 0;
    std::string mode;
    rate_table rates;
    void declare(param_decl& d) {
        d(clock, "clock", "${clock}", "the clock");
        d(latency, "latency", "2cycles", "a latency");
        d(bw, "bw", "32B/cycle", "a bandwidth");
        d(size, "size", required, "a size");
        d(count, "count", "4", "a count", bound::positive);
        d.choice(mode, "mode", "a", {"a", "b"}, "a choice");
        d(rates, "rates", "{fp16: 256, fp32: 64}", "a table");
    }
};

std::string load(const std::string& yaml, param_context& ctx, demo_params& p,
                 const param_decl::preset_values* preset = nullptr) {
    const yaml_node n = yaml_node::load_string(yaml, "p.yaml");
    try {
        param_decl d(n, &ctx, "x", "component 'x' (demo)");
        d.set_preset(preset);
        p.declare(d);
        d.finish();
    } catch (const input_error& e) {
        return e.what();
    }
    return {};
}
}  // namespace

TEST(param, describe_lists_every_declaration_once) {
    const auto specs = describe_params<demo_params>();
    ASSERT_EQ(specs.size(), 7u);
    EXPECT_EQ(specs[0].name, "clock");
    EXPECT_EQ(specs[3].name, "size");
    EXPECT_TRUE(specs[3].is_required);
    EXPECT_EQ(specs[1].default_text, "2cycles");
    EXPECT_EQ(specs[5].choices, (std::vector<std::string>{"a", "b"}));
}

TEST(param, load_reads_yaml_defaults_overrides_and_presets) {
    param_context ctx;
    ctx.set_variable("clock", "2GHz");
    ctx.add_override("x.count", "8");
    demo_params p;
    const param_decl::preset_values preset = {{"bw", "64B/cycle"}, {"latency", "5ns"}};
    EXPECT_EQ(load("{size: 4KiB, latency: 3cycles, rates: {int8: 1024}}", ctx, p, &preset), "");
    EXPECT_DOUBLE_EQ(p.clock.hz(), 2e9);
    EXPECT_EQ(p.latency.to_ticks(p.clock.clock()), 1500000u) << "YAML wins over the preset: 3 cycles at 2 GHz";
    EXPECT_DOUBLE_EQ(p.bw.bytes_per_second(p.clock.clock()), 128e9) << "the preset wins over the default";
    EXPECT_EQ(p.size.bytes(), 4096u);
    EXPECT_EQ(p.count, 8) << "--set wins over everything";
    EXPECT_EQ(p.mode, "a");
    EXPECT_DOUBLE_EQ(p.rates.at(dtype::int8), 1024);
    EXPECT_FALSE(p.rates.has(dtype::fp16)) << "a table given in YAML replaces the default table";
    EXPECT_TRUE(ctx.unused_overrides().empty());
    bool found = false;
    for (const auto& [k, v] : ctx.resolved())
        if (k == "x.count") found = v == "8";
    EXPECT_TRUE(found) << "resolved values record what was used";
}

TEST(param, strict_errors_say_where_and_what) {
    param_context ctx;
    ctx.set_variable("clock", "1GHz");
    demo_params p;
    EXPECT_NE(load("{size: 1KiB, cout: 3}", ctx, p).find("p.yaml:1:14: unknown key 'cout'"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, cout: 3}", ctx, p).find("did you mean 'count'"), std::string::npos);
    EXPECT_NE(load("{latency: 1ns}", ctx, p).find("missing required parameter 'size'"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, count: 0}", ctx, p).find("must be greater than zero"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, mode: c}", ctx, p).find("'c' is not one of: a, b"), std::string::npos);
    EXPECT_NE(load("{size: 10}", ctx, p).find("a size needs a unit"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, latency: 5}", ctx, p).find("a time needs a unit"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, rates: {fp17: 3}}", ctx, p).find("unknown data type 'fp17'"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, count: 2.5}", ctx, p).find("expected a whole number"), std::string::npos);
    EXPECT_NE(load("{size: 1KiB, bw: 1GHz}", ctx, p).find("got '1GHz' (a frequency)"), std::string::npos);
}

TEST(registry, a_duplicate_kind_is_an_error) {
    kind_registry& r = kind_registry::instance();
    const size_t before = r.errors().size();
    EXPECT_NE(r.find("pe"), nullptr) << "kinds register themselves at static initialisation";
    kind_info dup;
    dup.name = "pe";
    EXPECT_FALSE(r.add(dup));
    ASSERT_EQ(r.errors().size(), before + 1);
    EXPECT_NE(r.errors().back().find("'pe' is registered twice"), std::string::npos);
}
