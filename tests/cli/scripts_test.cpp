// The docs run the scripts directly (`scripts/plot_energy.py ...`): every script is executable and names its
// interpreter.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

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
