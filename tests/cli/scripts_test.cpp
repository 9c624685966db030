// The docs run the scripts directly (`scripts/plot_energy.py ...`): every script is executable and names its
// interpreter.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

TEST(scripts, every_script_is_executable_with_a_shebang) {
    size_t checked = 0;
    for (const auto& e : std::filesystem::directory_iterator("scripts")) {
        const std::string ext = e.path().extension().string();
        if (ext != ".py" && ext != ".sh") continue;
        struct stat st {};
        ASSERT_EQ(stat(e.path().c_str(), &st), 0) << e.path();
        EXPECT_TRUE(st.st_mode & S_IXUSR) << e.path() << " is not executable (chmod +x)";
        std::ifstream in(e.path());
        std::string first;
        std::getline(in, first);
        EXPECT_EQ(first.rfind("#!", 0), 0u) << e.path() << " has no #! line";
        ++checked;
    }
    EXPECT_GE(checked, 10u);
}

TEST(scripts, every_plot_script_is_rendered_by_the_plot_test) {
    // tests/scripts/sweep_python_test.py runs each plot script the docs use and checks the PNG it writes.
    std::ifstream in("tests/scripts/sweep_python_test.py");
    std::stringstream text;
    text << in.rdbuf();
    size_t plots = 0;
    for (const auto& e : std::filesystem::directory_iterator("scripts")) {
        const std::string name = e.path().filename().string();
        if (name.rfind("plot_", 0) != 0 || e.path().extension() != ".py") continue;
        ++plots;
        EXPECT_NE(text.str().find("\"" + name + "\""), std::string::npos)
            << name << " is not rendered by tests/scripts/sweep_python_test.py";
    }
    EXPECT_GE(plots, 6u);
}
