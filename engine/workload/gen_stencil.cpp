// The classic wafer-scale workload: a 3D 7-point stencil on a structured grid, applied in sweeps or inside
// BiCGStab iterations (van der Vorst 1992) as in Rocki et al., "Fast stencil-code computation on a
// wafer-scale processor" (SC20). Each BiCGStab iteration applies the operator twice, takes four inner
// products (global reductions, the synchronisation points; the residual norm a convergence test would add is
// left out) and does six vector updates; the scalars between
// them are tiny ops on rank-0 tensors, so the dependencies are exact.
#include "engine/workload/builder.h"
#include "engine/workload/generators.h"

namespace tessel {

namespace {

workload_graph build_stencil(const workload_params& p) {
    const std::int64_t nx = p.positive("nx"), ny = p.positive("ny"), nz = p.positive("nz");
    const std::int64_t iterations = p.repeats("iterations", 1);  // one op per iteration at least
    const std::string solver = p.choice("solver", {"none", "bicgstab"});
    const shape_t grid = {nx, ny, nz};
    graph_builder b("stencil", p.precision());
    // The operator's 7 coefficients (centre and six neighbours), constant across the grid.
    const int coeff = b.constant("coefficients", {7});
    auto apply = [&](const std::string& name, int x) { return b.add1("stencil7", name, {x, coeff}); };
    if (solver == "none") {
        int x = b.input("x", grid);
        for (std::int64_t i = 1; i <= iterations; ++i) x = apply("sweep" + std::to_string(i), x);
        return b.finish();
    }
    // BiCGStab state entering the first iteration: x, r, the shadow residual r0, p and rho = r0 . r.
    int x = b.state("x", grid), r = b.state("r", grid), p_dir = b.state("p", grid);
    const int r0 = b.state("r_hat", grid);
    int rho = b.state("rho", {});
    for (std::int64_t i = 1; i <= iterations; ++i) {
        const std::string n = "it" + std::to_string(i) + ".";
        const int v = apply(n + "v", p_dir);
        const int alpha = b.add1("div", n + "alpha", {rho, b.add1("dot", n + "dot_r_hat_v", {r0, v})});
        const int s = b.add1("fma", n + "s", {b.add1("neg", n + "neg_alpha", {alpha}), v, r});
        const int t = apply(n + "t", s);
        const int omega =
            b.add1("div", n + "omega", {b.add1("dot", n + "dot_t_s", {t, s}), b.add1("dot", n + "dot_t_t", {t, t})});
        x = b.add1("fma", n + "x_half", {alpha, p_dir, x});
        x = b.add1("fma", n + "x", {omega, s, x});
        const int neg_omega = b.add1("neg", n + "neg_omega", {omega});
        r = b.add1("fma", n + "r", {neg_omega, t, s});
        const int rho_next = b.add1("dot", n + "rho", {r0, r});
        const int beta = b.add1(
            "mul", n + "beta",
            {b.add1("div", n + "rho_ratio", {rho_next, rho}), b.add1("div", n + "alpha_over_omega", {alpha, omega})});
        const int pv = b.add1("fma", n + "p_minus_omega_v", {neg_omega, v, p_dir});
        p_dir = b.add1("fma", n + "p", {beta, pv, r});
        rho = rho_next;
    }
    return b.finish();
}

}  // namespace

generator_info stencil_generator() {
    generator_info g;
    g.name = "stencil";
    g.doc = "3D 7-point stencil on an nx x ny x nz grid: plain sweeps, or BiCGStab iterations with that operator";
    g.params = {{"nx", "64", "grid points along x"},
                {"ny", "64", "grid points along y"},
                {"nz", "64", "grid points along z (the axis a wafer keeps in one PE's column)"},
                {"iterations", "1", "sweeps, or BiCGStab iterations"},
                {"solver", "none", "none (stencil sweeps) or bicgstab"},
                {"precision", "fp32", "data type of the grid"}};
    g.build = build_stencil;
    return g;
}

}  // namespace tessel
