// Helpers shared by the workload tests: running the tessel binary, temporary files, and building small ONNX
// models in memory (to cover op types and error cases no exported fixture has).
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/core/error.h"
#include "tests/support/errors.h"

namespace tessel::test {

/// Runs `tessel ARGS` (TESSEL_BIN) and returns stdout and stderr together; `rc` gets the exit status.
inline std::string run_tessel(const std::string& args, int& rc) {
    const char* bin = std::getenv("TESSEL_BIN");
    if (!bin) {
        rc = -1;
        return "TESSEL_BIN is not set";
    }
    const std::string cmd = std::string(bin) + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf{};
    while (p && fgets(buf.data(), static_cast<int>(buf.size()), p)) out += buf.data();
    const int status = p ? pclose(p) : -1;
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

/// A file in a fresh temporary folder, removed with the folder at the end of the test.
class temp_dir {
public:
    temp_dir() {
        m_path = std::filesystem::temp_directory_path() /
                 ("tessel_wl_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
        std::filesystem::create_directories(m_path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    std::string file(const std::string& name) const { return (m_path / name).string(); }
    std::string write(const std::string& name, const std::string& content) const {
        std::ofstream(file(name), std::ios::binary) << content;
        return file(name);
    }

private:
    static int& counter() {
        static int c = 0;
        return c;
    }
    std::filesystem::path m_path;
};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ---- small ONNX models -----------------------------------------------------------------------------------

inline void set_shape(onnx::ValueInfoProto* v, const std::string& name, int type,
                      const std::vector<std::int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (auto d : dims) {
        if (d < 0)
            s->add_dim()->set_dim_param("batch");
        else
            s->add_dim()->set_dim_value(d);
    }
}

struct onnx_model {
    onnx::ModelProto m;
    explicit onnx_model(int opset = 17) {
        m.set_ir_version(8);
        m.set_producer_name("tessel-test");
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        m.mutable_graph()->set_name("test");
    }
    onnx_model& input(const std::string& name, const std::vector<std::int64_t>& dims,
                      int type = onnx::TensorProto::FLOAT) {
        set_shape(m.mutable_graph()->add_input(), name, type, dims);
        return *this;
    }
    onnx_model& output(const std::string& name) {
        m.mutable_graph()->add_output()->set_name(name);
        return *this;
    }
    onnx_model& value_info(const std::string& name, const std::vector<std::int64_t>& dims,
                           int type = onnx::TensorProto::FLOAT) {
        set_shape(m.mutable_graph()->add_value_info(), name, type, dims);
        return *this;
    }
    /// A float weight with dims only (external data that is not there).
    onnx_model& weight(const std::string& name, const std::vector<std::int64_t>& dims) {
        auto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (auto d : dims) t->add_dims(d);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* e = t->add_external_data();
        e->set_key("location");
        e->set_value("absent.bin");
        return *this;
    }
    onnx_model& ints(const std::string& name, const std::vector<std::int64_t>& values) {
        auto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<std::int64_t>(values.size()));
        for (auto v : values) t->add_int64_data(v);
        return *this;
    }
    onnx::NodeProto* node(const std::string& type, const std::vector<std::string>& in,
                          const std::vector<std::string>& out, const std::string& name = {}) {
        auto* n = m.mutable_graph()->add_node();
        n->set_op_type(type);
        n->set_name(name.empty() ? out.at(0) : name);
        for (const auto& i : in) n->add_input(i);
        for (const auto& o : out) n->add_output(o);
        return n;
    }
    std::string save(const temp_dir& dir, const std::string& name) const {
        std::string bytes;
        m.SerializeToString(&bytes);
        return dir.write(name, bytes);
    }
};

inline void attr_int(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

inline void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}

}  // namespace tessel::test
