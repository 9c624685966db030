#include "engine/workload/layers.h"

namespace tessel {

int linear(graph_builder& b, const std::string& name, int x, std::int64_t out, bool bias) {
    const std::int64_t in = b.shape(x).back();
    std::vector<int> inputs = {x, b.weight(name + ".weight", {in, out})};
    if (bias) inputs.push_back(b.weight(name + ".bias", {out}));
    return b.add1("matmul", name, inputs);
}

int conv_bn(graph_builder& b, const std::string& name, const std::string& bn_name, int x, std::int64_t out_channels,
            std::int64_t kernel, std::int64_t stride, std::int64_t padding, std::int64_t groups) {
    const std::int64_t in = b.shape(x)[1];
    const int w = b.weight(name + ".weight", {out_channels, in / groups, kernel, kernel});
    const int y =
        b.add1("conv2d", name, {x, w}, op_attrs().is("stride", {stride}).is("padding", {padding}).i("groups", groups));
    const std::vector<int> bn = {
        y, b.weight(bn_name + ".weight", {out_channels}), b.weight(bn_name + ".bias", {out_channels}),
        b.state(bn_name + ".running_mean", {out_channels}), b.state(bn_name + ".running_var", {out_channels})};
    return b.add1("batchnorm", bn_name, bn);
}

int layer_norm(graph_builder& b, const std::string& name, int x) {
    const std::int64_t d = b.shape(x).back();
    return b.add1("layernorm", name, {x, b.weight(name + ".weight", {d}), b.weight(name + ".bias", {d})});
}

int rms_norm(graph_builder& b, const std::string& name, int x) {
    const std::int64_t d = b.shape(x).back();
    return b.add1("rmsnorm", name, {x, b.weight(name + ".weight", {d})});
}

}  // namespace tessel
