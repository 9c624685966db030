// Every bundled platform says how far its numbers can be trusted (`validation:`: calibrated, checked or
// uncalibrated, on what, and the doc that shows it), every number it quotes is in that doc, and every run summary
// carries it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "models/core/yaml_node.h"
#include "tests/support/cli.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;
using tessel::test::write_temp;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST(platform_validation, every_bundled_platform_states_it_and_its_numbers_are_in_its_doc) {
    int platforms = 0;
    for (const auto& e : fs::recursive_directory_iterator("platforms")) {
        if (e.path().extension() != ".yaml") continue;
        ++platforms;
        const auto root = tessel::yaml_node::load_file(e.path().string());
        ASSERT_TRUE(root.has("validation")) << e.path();
        const std::string text = root["validation"].scalar("validation");
        std::smatch m;
        ASSERT_TRUE(
            std::regex_match(text, m, std::regex(R"((calibrated|checked|uncalibrated): .+\((docs/[^()]+\.md)\))")))
            << e.path() << ": " << text;
        const fs::path doc = m[2].str();
        ASSERT_TRUE(fs::exists(doc)) << e.path() << " names " << doc;
        const std::string page = slurp(doc);
        const std::regex number(R"(\d+(\.\d+)?)");
        const std::string claim = text.substr(0, static_cast<size_t>(m.position(2)) - 1);  // without "(DOC)"
        for (auto it = std::sregex_iterator(claim.begin(), claim.end(), number); it != std::sregex_iterator(); ++it)
            EXPECT_NE(page.find(it->str()), std::string::npos)
                << e.path() << ": " << it->str() << " is not in " << doc << " (\"" << text << "\")";
    }
    EXPECT_GE(platforms, 36);
}

TEST(platform_validation, the_summary_carries_it_and_a_bad_one_is_located) {
    const auto out = fs::temp_directory_path() / "tessel_validation_run";
    fs::remove_all(out);
    const auto r = run_tessel("run -q -p h100_sxm -w gemm -o " + out.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const auto s = nlohmann::json::parse(slurp(out / "summary.json"));
    EXPECT_EQ(s["validation"].get<std::string>().rfind("calibrated: ", 0), 0u) << s["validation"];
    const auto shown = run_tessel("run -p h100_sxm -w gemm -o " + out.string());
    EXPECT_NE(shown.out.find("\nvalidation calibrated: "), std::string::npos) << shown.out;
    fs::remove_all(out);

    const std::string bad = write_temp("tessel_bad_validation.yaml",
                                       "platform: p\nvalidation: \"trust me\"\ncomponents:\n  pe: {kind: pe}\n");
    EXPECT_TESSEL_ERROR("run -q -p " + bad + " -w gemm",
                        "tessel_bad_validation.yaml:2:13: validation must start with calibrated:, checked: or "
                        "uncalibrated: and say on what (docs/platform-yaml.md), got 'trust me'");
}
