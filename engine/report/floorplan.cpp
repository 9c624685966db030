#include "engine/report/floorplan.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "models/core/error.h"
#include "models/core/output_file.h"

namespace tessel {

namespace {

/// A perceptually ordered colour ramp (dark blue = idle, yellow = always busy), interpolated from 5 anchors
/// of matplotlib's viridis.
std::array<unsigned char, 3> colour(double v) {
    static const double anchors[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    v = std::clamp(std::isfinite(v) ? v : 0.0, 0.0, 1.0) * 4;
    const int i = std::min(3, static_cast<int>(v));
    const double f = v - i;
    std::array<unsigned char, 3> c{};
    for (int k = 0; k < 3; ++k) c[static_cast<size_t>(k)] = static_cast<unsigned char>(std::lround(anchors[i][k] + f * (anchors[i + 1][k] - anchors[i][k])));
    return c;
}

std::string xml(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '&') o += "&amp;";
        else if (c == '"') o += "&quot;";
        else o += c;
    }
    return o;
}

void write_svg(const floorplan& fp, const std::string& path) {
    const int cell = std::max(4, std::min(40, 800 / std::max(fp.width, fp.height)));
    const int W = fp.width * cell, H = fp.height * cell;
    output_file out(path, "floorplan");
    std::ostream& os = out.stream();
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W + 20 << "\" height=\"" << H + 70
       << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    os << "<text x=\"10\" y=\"16\">" << xml(fp.title) << "</text>\n<g transform=\"translate(10,24)\">\n";
    // y grows upwards on the chip, downwards in the image: draw row y at H - (y + 1) * cell.
    for (int y = 0; y < fp.height; ++y)
        for (int x = 0; x < fp.width; ++x) {
            const double v = fp.value[static_cast<size_t>(y * fp.width + x)];
            const auto c = colour(v);
            os << "<rect x=\"" << x * cell << "\" y=\"" << H - (y + 1) * cell << "\" width=\"" << cell << "\" height=\"" << cell
               << "\" fill=\"rgb(" << int(c[0]) << "," << int(c[1]) << "," << int(c[2]) << ")\"><title>(" << x << "," << y
               << ") busy " << std::lround(100 * v) << "%</title></rect>\n";
        }
    for (const auto& r : fp.regions) {
        const int x = r.x0 * cell, y = H - r.y1 * cell, w = (r.x1 - r.x0) * cell, h = (r.y1 - r.y0) * cell;
        os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
           << "\" fill=\"none\" stroke=\"white\" stroke-width=\"2\"><title>" << xml(r.label) << "</title></rect>\n";
        if (w >= 30 && h >= 14)
            os << "<text x=\"" << x + 3 << "\" y=\"" << y + 13 << "\" fill=\"white\">" << xml(r.label) << "</text>\n";
    }
    os << "</g>\n";
    // Legend.
    for (int i = 0; i <= 10; ++i) {
        const auto c = colour(i / 10.0);
        os << "<rect x=\"" << 10 + i * 20 << "\" y=\"" << H + 34 << "\" width=\"20\" height=\"12\" fill=\"rgb(" << int(c[0]) << ","
           << int(c[1]) << "," << int(c[2]) << ")\"/>\n";
    }
    os << "<text x=\"10\" y=\"" << H + 62 << "\">busy 0%</text><text x=\"200\" y=\"" << H + 62 << "\">100%</text>\n</svg>\n";
    out.commit();
}

void put32(std::string& s, std::uint32_t v) {
    for (int i = 3; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

void chunk(std::ostream& os, const char* type, const std::string& data) {
    std::string c;
    put32(c, static_cast<std::uint32_t>(data.size()));
    std::string body = std::string(type, 4) + data;
    c += body;
    put32(c, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
    os.write(c.data(), static_cast<std::streamsize>(c.size()));
}

void write_png(const floorplan& fp, const std::string& path) {
    const int scale = std::max(1, 600 / std::max(fp.width, fp.height));
    const int W = fp.width * scale, H = fp.height * scale;
    std::vector<unsigned char> px(static_cast<size_t>(W) * static_cast<size_t>(H) * 3);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            const int ux = x / scale, uy = fp.height - 1 - y / scale;
            auto c = colour(fp.value[static_cast<size_t>(uy * fp.width + ux)]);
            // Region borders in white.
            for (const auto& r : fp.regions) {
                const bool inside = ux >= r.x0 && ux < r.x1 && uy >= r.y0 && uy < r.y1;
                const bool edge = inside && (ux == r.x0 || ux == r.x1 - 1 || uy == r.y0 || uy == r.y1 - 1) &&
                                  (r.x1 - r.x0 > 2 && r.y1 - r.y0 > 2);
                if (edge) c = {255, 255, 255};
            }
            std::copy(c.begin(), c.end(), px.begin() + (static_cast<size_t>(y) * static_cast<size_t>(W) + static_cast<size_t>(x)) * 3);
        }
    std::string raw;
    raw.reserve(static_cast<size_t>(H) * (static_cast<size_t>(W) * 3 + 1));
    for (int y = 0; y < H; ++y) {
        raw += '\0';  // filter: none
        raw.append(reinterpret_cast<const char*>(px.data()) + static_cast<size_t>(y) * static_cast<size_t>(W) * 3, static_cast<size_t>(W) * 3);
    }
    uLongf len = compressBound(static_cast<uLong>(raw.size()));
    std::string z(len, '\0');
    if (compress2(reinterpret_cast<Bytef*>(z.data()), &len, reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()), 6) != Z_OK)
        throw input_error("cannot compress floorplan '" + path + "'");
    z.resize(len);
    output_file out(path, "floorplan");
    std::ostream& os = out.stream();
    os.write("\x89PNG\r\n\x1a\n", 8);
    std::string ihdr;
    put32(ihdr, static_cast<std::uint32_t>(W));
    put32(ihdr, static_cast<std::uint32_t>(H));
    ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, no interlace
    chunk(os, "IHDR", ihdr);
    chunk(os, "IDAT", z);
    chunk(os, "IEND", "");
    out.commit();
}

}  // namespace

void write_floorplan(const floorplan& fp, const std::string& path) {
    if (fp.width <= 0 || fp.height <= 0 || fp.value.size() != static_cast<size_t>(fp.width) * static_cast<size_t>(fp.height))
        throw std::logic_error("floorplan '" + fp.title + "' has inconsistent dimensions");
    const auto dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
    if (ext == ".svg") write_svg(fp, path);
    else if (ext == ".png") write_png(fp, path);
    else throw input_error("--floorplan '" + path + "': use a .svg or .png file name");
}

}  // namespace tessel
