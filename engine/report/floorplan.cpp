#include "engine/report/floorplan.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
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
    for (int k = 0; k < 3; ++k)
        c[static_cast<size_t>(k)] =
            static_cast<unsigned char>(std::lround(anchors[i][k] + f * (anchors[i + 1][k] - anchors[i][k])));
    return c;
}

std::string xml(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<')
            o += "&lt;";
        else if (c == '>')
            o += "&gt;";
        else if (c == '&')
            o += "&amp;";
        else if (c == '"')
            o += "&quot;";
        else
            o += c;
    }
    return o;
}

/// The colour scale: 0..1 (busy fraction) or, relative, the values' own range.
struct scale {
    double lo = 0, hi = 1;
    explicit scale(const floorplan& fp) {
        if (!fp.relative || fp.value.empty()) return;
        lo = *std::min_element(fp.value.begin(), fp.value.end());
        hi = *std::max_element(fp.value.begin(), fp.value.end());
        for (const auto& l : fp.links) {
            lo = std::min(lo, l.value);
            hi = std::max(hi, l.value);
        }
        if (hi <= lo) hi = lo + 1e-9;
    }
    double operator()(double v) const { return (v - lo) / (hi - lo); }
    static std::string percent(double v) {
        char b[32];
        std::snprintf(b, sizeof b, v < 0.1 && v > 0 ? "%.1f%%" : "%.0f%%", 100 * v);
        return b;
    }
    std::string low() const { return percent(lo); }
    std::string high() const { return percent(hi); }
    std::string caption() const { return lo == 0 && hi == 1 ? "busy fraction" : "busy fraction (relative scale)"; }
    /// On the absolute scale, a picture whose units are all nearly idle is one flat colour: say how to see more.
    static std::string hint(const floorplan& fp) {
        double top = 0;
        for (double v : fp.value) top = std::max(top, v);
        for (const auto& l : fp.links) top = std::max(top, l.value);
        return fp.relative || top >= 0.1
                   ? ""
                   : " (all under " + percent(top) + ": --floorplan-relative spreads the colours)";
    }
};

/// With links, a unit is drawn inset by this share of its cell on each side, and its links cross the gutters.
constexpr double gutter = 0.2;

/// A rectangle in grid units (y up): where a unit or a link is drawn.
struct box {
    double x0, y0, x1, y1;
};

box unit_box(const floorplan& fp, int x, int y) {
    const double g = fp.links.empty() ? 0.0 : gutter;
    return {x + g, y + g, x + 1 - g, y + 1 - g};
}

/// Two bars per pair of neighbours: east above west in a row's gutter, north left of south in a column's.
box link_box(const floorplan_link& l) {
    const double x = l.x, y = l.y, g = gutter;
    switch (l.dir) {
        case floorplan_link::east:
            return {x + 1 - g, y + 0.55, x + 1 + g, y + 0.75};
        case floorplan_link::west:
            return {x - g, y + 0.25, x + g, y + 0.45};
        case floorplan_link::north:
            return {x + 0.25, y + 1 - g, x + 0.45, y + 1 + g};
        case floorplan_link::south:
            return {x + 0.55, y - g, x + 0.75, y + g};
    }
    return {x, y, x, y};
}

const char* direction_name(floorplan_link::direction d) {
    static const char* names[] = {"east", "west", "north", "south"};
    return names[d];
}

/// Grids larger than this per side are drawn in blocks (the mean of each block) in SVG: a wafer's 750 x 994 PEs
/// as one rectangle each made a 78 MB file.
constexpr int svg_max_cells = 200;

void write_svg(const floorplan& fp, const std::string& path) {
    const scale sc(fp);
    // Blocks of b x b units when the grid is larger than svg_max_cells a side.
    const int b = std::max(1, (std::max(fp.width, fp.height) + svg_max_cells - 1) / svg_max_cells);
    const int gw = (fp.width + b - 1) / b, gh = (fp.height + b - 1) / b;
    const int cell = std::max(4, std::min(40, 800 / std::max(gw, gh)));
    const int W = gw * cell, H = gh * cell;
    const int legend_w = 220, width = std::max(W, legend_w + 60) + 20;
    output_file out(path, "floorplan");
    std::ostream& os = out.stream();
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << H + 84
       << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    os << "<text x=\"10\" y=\"16\">" << xml(fp.title)
       << (b > 1 ? " (" + std::to_string(b) + " x " + std::to_string(b) + " units per cell)" : "")
       << "</text>\n<g transform=\"translate(10,24)\">\n";
    // y grows upwards on the chip, downwards in the image: draw row y at H - (y + 1) * cell.
    for (int gy = 0; gy < gh; ++gy)
        for (int gx = 0; gx < gw; ++gx) {
            double sum = 0;
            int n = 0;
            for (int y = gy * b; y < std::min(fp.height, (gy + 1) * b); ++y)
                for (int x = gx * b; x < std::min(fp.width, (gx + 1) * b); ++x, ++n)
                    sum += fp.value[static_cast<size_t>(y * fp.width + x)];
            const double v = sum / n;
            const auto c = colour(sc(v));
            const box u = b > 1 ? box{double(gx), double(gy), gx + 1.0, gy + 1.0} : unit_box(fp, gx, gy);
            os << "<rect x=\"" << u.x0 * cell << "\" y=\"" << H - u.y1 * cell << "\" width=\"" << (u.x1 - u.x0) * cell
               << "\" height=\"" << (u.y1 - u.y0) * cell << "\" fill=\"rgb(" << int(c[0]) << "," << int(c[1]) << ","
               << int(c[2]) << ")\"><title>(" << gx * b << "," << gy * b << (b > 1 ? ") block" : ")") << " busy "
               << scale::percent(v) << "</title></rect>\n";
        }
    if (b == 1)
        for (const auto& l : fp.links) {
            const box r = link_box(l);
            const auto c = colour(sc(l.value));
            os << "<rect x=\"" << r.x0 * cell << "\" y=\"" << H - r.y1 * cell << "\" width=\"" << (r.x1 - r.x0) * cell
               << "\" height=\"" << (r.y1 - r.y0) * cell << "\" fill=\"rgb(" << int(c[0]) << "," << int(c[1]) << ","
               << int(c[2]) << ")\"><title>link (" << l.x << "," << l.y << ") " << direction_name(l.dir) << " busy "
               << scale::percent(l.value) << "</title></rect>\n";
        }
    for (const auto& r : fp.regions) {
        const double f = static_cast<double>(cell) / b;
        const int x = static_cast<int>(r.x0 * f), y = H - static_cast<int>(r.y1 * f),
                  w = static_cast<int>((r.x1 - r.x0) * f), h = static_cast<int>((r.y1 - r.y0) * f);
        os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
           << "\" fill=\"none\" stroke=\"white\" stroke-width=\"2\"><title>" << xml(r.label) << "</title></rect>\n";
        if (w >= 30 && h >= 14)
            os << "<text x=\"" << x + 3 << "\" y=\"" << y + 13 << "\" fill=\"white\">" << xml(r.label) << "</text>\n";
    }
    os << "</g>\n";
    // The colour bar, its ends and its caption.
    for (int i = 0; i <= 10; ++i) {
        const auto c = colour(i / 10.0);
        os << "<rect x=\"" << 10 + i * 20 << "\" y=\"" << H + 34 << "\" width=\"20\" height=\"12\" fill=\"rgb("
           << int(c[0]) << "," << int(c[1]) << "," << int(c[2]) << ")\"/>\n";
    }
    os << "<text x=\"10\" y=\"" << H + 62 << "\">" << sc.low() << "</text><text x=\"" << 10 + legend_w << "\" y=\""
       << H + 62 << "\" text-anchor=\"end\">" << sc.high() << "</text>\n<text x=\"10\" y=\"" << H + 78 << "\">"
       << sc.caption() << (fp.links.empty() || b > 1 ? "" : ": units as squares, links as bars between them")
       << scale::hint(fp) << "</text>\n</svg>\n";
    out.commit();
}

/// A 3 x 5 pixel font for the PNG's title and colour bar: capitals, digits and a little punctuation (lower case
/// is drawn as capitals). Each glyph is 5 rows of 3 bits, the top row first.
const std::array<std::uint8_t, 5>* glyph(char ch) {
    static const std::array<std::array<std::uint8_t, 5>, 26> letters = {{
        {2, 5, 7, 5, 5}, {6, 5, 6, 5, 6}, {3, 4, 4, 4, 3}, {6, 5, 5, 5, 6}, {7, 4, 6, 4, 7}, {7, 4, 6, 4, 4},
        {3, 4, 5, 5, 3}, {5, 5, 7, 5, 5}, {7, 2, 2, 2, 7}, {1, 1, 1, 5, 2}, {5, 5, 6, 5, 5}, {4, 4, 4, 4, 7},
        {5, 7, 7, 5, 5}, {6, 5, 5, 5, 5}, {2, 5, 5, 5, 2}, {6, 5, 6, 4, 4}, {2, 5, 5, 6, 3}, {6, 5, 6, 5, 5},
        {3, 4, 2, 1, 6}, {7, 2, 2, 2, 2}, {5, 5, 5, 5, 7}, {5, 5, 5, 5, 2}, {5, 5, 7, 7, 5}, {5, 5, 2, 5, 5},
        {5, 5, 2, 2, 2}, {7, 1, 2, 4, 7},
    }};
    static const std::array<std::array<std::uint8_t, 5>, 10> digits = {{
        {7, 5, 5, 5, 7},
        {2, 6, 2, 2, 7},
        {7, 1, 7, 4, 7},
        {7, 1, 7, 1, 7},
        {5, 5, 7, 1, 1},
        {7, 4, 7, 1, 7},
        {7, 4, 7, 5, 7},
        {7, 1, 1, 1, 1},
        {7, 5, 7, 5, 7},
        {7, 5, 7, 1, 7},
    }};
    static const std::string punct = " %.,-:[]()/*_=";
    static const std::array<std::array<std::uint8_t, 5>, 14> marks = {{
        {0, 0, 0, 0, 0},
        {5, 1, 2, 4, 5},
        {0, 0, 0, 0, 2},
        {0, 0, 0, 2, 4},
        {0, 0, 7, 0, 0},
        {0, 2, 0, 2, 0},
        {6, 4, 4, 4, 6},
        {3, 1, 1, 1, 3},
        {2, 4, 4, 4, 2},
        {2, 1, 1, 1, 2},
        {1, 1, 2, 4, 4},
        {0, 5, 2, 5, 0},
        {0, 0, 0, 0, 7},
        {0, 7, 0, 7, 0},
    }};
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (c >= 'A' && c <= 'Z') return &letters[static_cast<size_t>(c - 'A')];
    if (c >= '0' && c <= '9') return &digits[static_cast<size_t>(c - '0')];
    const size_t i = punct.find(c);
    return i == std::string::npos ? nullptr : &marks[i];
}

/// An RGB image with rectangles and text, for the PNG.
struct canvas {
    int w, h;
    std::vector<unsigned char> px;
    canvas(int w_, int h_) : w(w_), h(h_), px(static_cast<size_t>(w_) * static_cast<size_t>(h_) * 3, 255) {}
    void set(int x, int y, const std::array<unsigned char, 3>& c) {
        if (x < 0 || y < 0 || x >= w || y >= h) return;
        std::copy(c.begin(), c.end(),
                  px.begin() + (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3);
    }
    void fill(int x0, int y0, int x1, int y1, const std::array<unsigned char, 3>& c) {
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x) set(x, y, c);
    }
    /// Text at (x, y) (its top left), each font pixel `s` x `s`; returns the x after it.
    int text(int x, int y, const std::string& str, int s, std::array<unsigned char, 3> ink = {0, 0, 0}) {
        for (char ch : str) {
            if (const auto* g = glyph(ch))
                for (int r = 0; r < 5; ++r)
                    for (int k = 0; k < 3; ++k)
                        if ((*g)[static_cast<size_t>(r)] & (4 >> k))
                            fill(x + k * s, y + r * s, x + (k + 1) * s, y + (r + 1) * s, ink);
            x += 4 * s;
        }
        return x;
    }
    static int text_width(const std::string& str, int s) { return static_cast<int>(str.size()) * 4 * s; }
};

void put32(std::string& s, std::uint32_t v) {
    for (int i = 3; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

void chunk(std::ostream& os, const char* type, const std::string& data) {
    std::string c;
    put32(c, static_cast<std::uint32_t>(data.size()));
    std::string body = std::string(type, 4) + data;
    c += body;
    put32(c, static_cast<std::uint32_t>(
                 crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
    os.write(c.data(), static_cast<std::streamsize>(c.size()));
}

void write_png(const floorplan& fp, const std::string& path) {
    const scale sc(fp);
    const int cells = std::max(1, 600 / std::max(fp.width, fp.height));
    const int GW = fp.width * cells, GH = fp.height * cells;
    // Title above, colour bar and its scale below, in a white margin.
    const int s = 2, pad = 10, line = 5 * s + 6;
    const std::string caption = sc.caption() + scale::hint(fp);
    const int W = std::max({GW, 320, canvas::text_width(fp.title, s), canvas::text_width(caption, s)}) + 2 * pad;
    const int top = pad + line, H = top + GH + pad + 12 + 4 + 2 * line + pad;
    canvas cv(W, H);
    cv.text(pad, pad, fp.title, s);
    // Links are drawn where a cell has room for its gutters (at least 10 pixels).
    const bool links = !fp.links.empty() && cells >= 10;
    const auto inside = [&](const box& r, int x, int y) {  // pixel (x, y) of the grid, y down
        const double ux = (x + 0.5) / cells, uy = fp.height - (y + 0.5) / cells;
        return ux >= r.x0 && ux < r.x1 && uy >= r.y0 && uy < r.y1;
    };
    for (int y = 0; y < GH; ++y)
        for (int x = 0; x < GW; ++x) {
            const int ux = x / cells, uy = fp.height - 1 - y / cells;
            if (links && !inside(unit_box(fp, ux, uy), x, y)) {
                cv.set(pad + x, top + y, {255, 255, 255});
                continue;
            }
            auto c = colour(sc(fp.value[static_cast<size_t>(uy * fp.width + ux)]));
            // Region borders in white.
            for (const auto& r : fp.regions) {
                const bool in_region = ux >= r.x0 && ux < r.x1 && uy >= r.y0 && uy < r.y1;
                const bool edge = in_region && (ux == r.x0 || ux == r.x1 - 1 || uy == r.y0 || uy == r.y1 - 1) &&
                                  (r.x1 - r.x0 > 2 && r.y1 - r.y0 > 2);
                if (edge) c = {255, 255, 255};
            }
            cv.set(pad + x, top + y, c);
        }
    if (links)
        for (const auto& l : fp.links) {
            const box r = link_box(l);
            const auto c = colour(sc(l.value));
            for (int y = std::max(0, int((fp.height - r.y1) * cells));
                 y < std::min(GH, int((fp.height - r.y0) * cells) + 1); ++y)
                for (int x = std::max(0, int(r.x0 * cells)); x < std::min(GW, int(r.x1 * cells) + 1); ++x)
                    if (inside(r, x, y)) cv.set(pad + x, top + y, c);
        }
    const int bar_y = top + GH + pad, bar_w = std::max(GW, 320);
    for (int x = 0; x < bar_w; ++x)
        cv.fill(pad + x, bar_y, pad + x + 1, bar_y + 12, colour(static_cast<double>(x) / (bar_w - 1)));
    cv.text(pad, bar_y + 16, sc.low(), s);
    cv.text(pad + bar_w - canvas::text_width(sc.high(), s), bar_y + 16, sc.high(), s);
    cv.text(pad, bar_y + 16 + line, caption, s);
    // Each region's label in its top left corner, where it fits.
    for (const auto& r : fp.regions) {
        const int x = pad + r.x0 * cells + 3, y = top + (fp.height - r.y1) * cells + 3;
        if (canvas::text_width(r.label, s) + 6 <= (r.x1 - r.x0) * cells && 5 * s + 6 <= (r.y1 - r.y0) * cells)
            cv.text(x, y, r.label, s, {255, 255, 255});
    }
    const std::vector<unsigned char>& px = cv.px;
    std::string raw;
    raw.reserve(static_cast<size_t>(H) * (static_cast<size_t>(W) * 3 + 1));
    for (int y = 0; y < H; ++y) {
        raw += '\0';  // filter: none
        raw.append(reinterpret_cast<const char*>(px.data()) + static_cast<size_t>(y) * static_cast<size_t>(W) * 3,
                   static_cast<size_t>(W) * 3);
    }
    uLongf len = compressBound(static_cast<uLong>(raw.size()));
    std::string z(len, '\0');
    if (compress2(reinterpret_cast<Bytef*>(z.data()), &len, reinterpret_cast<const Bytef*>(raw.data()),
                  static_cast<uLong>(raw.size()), 6) != Z_OK)
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
    if (fp.width <= 0 || fp.height <= 0 ||
        fp.value.size() != static_cast<size_t>(fp.width) * static_cast<size_t>(fp.height))
        throw std::logic_error("floorplan '" + fp.title + "' has inconsistent dimensions");
    const auto dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
    if (ext == ".svg")
        write_svg(fp, path);
    else if (ext == ".png")
        write_png(fp, path);
    else
        throw input_error("--floorplan '" + path + "': use a .svg or .png file name");
}

}  // namespace tessel
