#include "engine/workload/scalesim_topology.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "models/core/checked.h"
#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel {

namespace {

struct field {
    std::string text;
    int column = 0;  // 1-based, of the field's first character after spaces
};

std::vector<field> split_row(const std::string& line) {
    std::vector<field> out;
    size_t begin = 0;
    for (;;) {
        const size_t end = line.find(',', begin);
        std::string f = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
        size_t lead = 0;
        while (lead < f.size() && std::isspace(static_cast<unsigned char>(f[lead]))) ++lead;
        size_t tail = f.size();
        while (tail > lead && std::isspace(static_cast<unsigned char>(f[tail - 1]))) --tail;
        out.push_back({f.substr(lead, tail - lead), static_cast<int>(begin + lead + 1)});
        if (end == std::string::npos) break;
        begin = end + 1;
    }
    // SCALE-Sim's rows end with a comma: the empty field after it is not a column.
    while (!out.empty() && out.back().text.empty()) out.pop_back();
    return out;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// An op or tensor name from a layer name: letters, digits and underscores.
std::string identifier(const std::string& layer) {
    std::string id;
    for (char c : layer) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "layer_" + id;
    return id;
}

}  // namespace

std::string scalesim_topology_yaml(const std::string& path) {
    require_input_file(path, "SCALE-Sim topology");
    std::ifstream in(path);
    if (!in) throw input_error("cannot read SCALE-Sim topology '" + path + "'");
    std::string line;
    int line_no = 0;
    std::vector<std::string> header;
    while (header.empty() && std::getline(in, line)) {
        ++line_no;
        for (const field& f : split_row(line)) header.push_back(lower(f.text));
    }
    if (header.empty())
        throw input_error("SCALE-Sim topology is empty (expected a header line and one row per layer)", {path, 1, 1});
    const bool gemm = header.size() >= 4 && header[1] == "m" && header[2] == "n" && header[3] == "k";
    const size_t columns = gemm ? 4 : 8;
    const char* layout =
        gemm ? "Layer, M, N, K,"
             : "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,";
    if (!gemm && (header.size() < 8 || header[1].find("ifmap") == std::string::npos))
        throw input_error(
            "not a SCALE-Sim topology header: expected '" + std::string(layout) + "' or 'Layer, M, N, K,'",
            {path, line_no, 1});

    std::ostringstream tensors, ops;
    std::set<std::string> names;
    int layers = 0;
    while (std::getline(in, line)) {
        ++line_no;
        const std::vector<field> row = split_row(line);
        if (row.empty()) continue;
        if (row.size() < columns)
            throw input_error(
                "layer '" + row[0].text + "' has " + std::to_string(row.size()) + " columns; a row is '" + layout + "'",
                {path, line_no, row.back().column});
        std::vector<long long> v;
        const size_t numbers = gemm ? 3 : std::min<size_t>(row.size(), 9) - 1;
        for (size_t i = 1; i <= numbers; ++i) {
            char* end = nullptr;
            errno = 0;
            const long long x = std::strtoll(row[i].text.c_str(), &end, 10);
            const std::string column = header[std::min(i, header.size() - 1)];
            if (row[i].text.empty() || *end != '\0' || x <= 0)
                throw input_error("'" + row[i].text + "' is not a positive whole number (column '" + column + "')",
                                  {path, line_no, row[i].column});
            // strtoll clamps a number past 2^63 to the largest one; sizes must also stay exact as doubles.
            if (errno == ERANGE || x > k_max_count)
                throw input_error("'" + row[i].text + "' is more than 2^53 (column '" + column + "')",
                                  {path, line_no, row[i].column});
            v.push_back(x);
        }
        const std::string name = identifier(row[0].text);
        if (!names.insert(name).second)
            throw input_error("two layers are named '" + name + "'", {path, line_no, row[0].column});
        ++layers;
        if (gemm) {
            // SCALE-Sim reads a GEMM layer as an M x K input times a K x N filter.
            tensors << "  " << name << "_in: {shape: [" << v[0] << ", " << v[2] << "], role: input}\n"
                    << "  " << name << "_w: {shape: [" << v[2] << ", " << v[1] << "], role: weight}\n";
            ops << "  - {name: " << name << ", op: matmul, inputs: [" << name << "_in, " << name << "_w]}\n";
            continue;
        }
        const long long ih = v[0], iw = v[1], fh = v[2], fw = v[3], ch = v[4], nf = v[5], sh = v[6];
        const long long sw = v.size() > 7 ? v[7] : sh;  // one stride is both, as in SCALE-Sim
        if (fh > ih || fw > iw)
            throw input_error("layer '" + row[0].text + "': a " + std::to_string(fh) + " x " + std::to_string(fw) +
                                  " filter does not fit a " + std::to_string(ih) + " x " + std::to_string(iw) +
                                  " input",
                              {path, line_no, row[3].column});
        // SCALE-Sim's output is ceil((in - filter + stride) / stride): one more than PyTorch's where the stride
        // does not divide evenly; padding the far edges by what that needs gives the same output size.
        auto pad = [](long long in_size, long long f, long long s) { return (s - (in_size - f) % s) % s; };
        const bool depthwise = row[0].text.find("DP") != std::string::npos;
        const long long filters =
            depthwise ? checked_mul(ch, nf, "layer '" + row[0].text + "': channels x filters", {path, line_no, 1}) : nf;
        tensors << "  " << name << "_in: {shape: [batch, " << ch << ", " << ih << ", " << iw << "], role: input}\n"
                << "  " << name << "_w: {shape: [" << filters << ", " << (depthwise ? 1 : ch) << ", " << fh << ", "
                << fw << "], role: weight}\n";
        ops << "  - {name: " << name << ", op: conv2d, inputs: [" << name << "_in, " << name << "_w], stride: [" << sh
            << ", " << sw << "], padding: [0, 0, " << pad(ih, fh, sh) << ", " << pad(iw, fw, sw) << "]"
            << (depthwise ? ", groups: " + std::to_string(ch) : std::string()) << "}\n";
    }
    if (layers == 0) throw input_error("SCALE-Sim topology has a header but no layers", {path, line_no, 1});
    std::ostringstream y;
    y << "# Imported by tessel from the SCALE-Sim topology " << path << " ("
      << (gemm ? "matrix products" : "convolutions")
      << "): one op per layer, each reading its own input as SCALE-Sim runs them.\n"
      << "workload: " << identifier(std::filesystem::path(path).stem().string()) << "\n"
      << "parameters:\n  batch: 1\n  precision: int8   # SCALE-Sim counts one-byte words\n"
      << "tensors:\n"
      << tensors.str() << "ops:\n"
      << ops.str();
    return y.str();
}

}  // namespace tessel
