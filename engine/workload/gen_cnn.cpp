// Convolutional generators: ResNet (He et al. 2015, torchvision's v1.5 layout with the stride on the 3x3
// convolution) and MobileNetV2 (Sandler et al. 2018, torchvision layout). Convolutions carry no bias;
// every one is followed by batchnorm, whose running statistics are state, not parameters.
#include <algorithm>
#include <cmath>

#include "engine/workload/generators.h"
#include "engine/workload/layers.h"

namespace tessel {

namespace {

/// Classifier head shared by both: global average pool, flatten, linear.
int classifier(graph_builder& b, int x, std::int64_t classes, const std::string& fc_name) {
    x = b.add1("global_avg_pool", "avgpool", {x});
    x = b.add1("flatten", "flatten", {x}, op_attrs().i("axis", 1));
    return linear(b, fc_name, x, classes, true);
}

workload_graph build_resnet(const workload_params& p) {
    const std::int64_t depth = p.integer("depth");
    const std::int64_t batch = p.positive("batch"), image = p.positive("image", 32), classes = p.positive("classes");
    // Blocks per stage, and whether they are bottlenecks (1x1, 3x3, 1x1 with expansion 4).
    std::vector<std::int64_t> blocks;
    bool bottleneck = false;
    switch (depth) {
        case 18:
            blocks = {2, 2, 2, 2};
            break;
        case 34:
            blocks = {3, 4, 6, 3};
            break;
        case 50:
            blocks = {3, 4, 6, 3};
            bottleneck = true;
            break;
        case 101:
            blocks = {3, 4, 23, 3};
            bottleneck = true;
            break;
        case 152:
            blocks = {3, 8, 36, 3};
            bottleneck = true;
            break;
        default:
            fail("generator resnet: depth must be 18, 34, 50, 101 or 152, got " + std::to_string(depth),
                 p.find("depth")->where);
    }
    const std::int64_t expansion = bottleneck ? 4 : 1;
    graph_builder b("resnet" + std::to_string(depth), p.precision());
    int x = b.input("image", {batch, 3, image, image});
    x = conv_bn(b, "conv1", "bn1", x, 64, 7, 2, 3);
    x = b.add1("relu", "relu", {x});
    x = b.add1("max_pool", "maxpool", {x}, op_attrs().is("kernel", {3}).is("stride", {2}).is("padding", {1}));
    std::int64_t in = 64;
    for (size_t stage = 0; stage < blocks.size(); ++stage) {
        const std::int64_t planes = 64 << stage;
        for (std::int64_t i = 0; i < blocks[stage]; ++i) {
            const std::string n = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
            const std::int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
            int y;
            if (bottleneck) {
                y = conv_bn(b, n + ".conv1", n + ".bn1", x, planes, 1, 1, 0);
                y = b.add1("relu", n + ".relu1", {y});
                y = conv_bn(b, n + ".conv2", n + ".bn2", y, planes, 3, stride, 1);
                y = b.add1("relu", n + ".relu2", {y});
                y = conv_bn(b, n + ".conv3", n + ".bn3", y, planes * expansion, 1, 1, 0);
            } else {
                y = conv_bn(b, n + ".conv1", n + ".bn1", x, planes, 3, stride, 1);
                y = b.add1("relu", n + ".relu1", {y});
                y = conv_bn(b, n + ".conv2", n + ".bn2", y, planes, 3, 1, 1);
            }
            int shortcut = x;
            if (stride != 1 || in != planes * expansion)
                shortcut = conv_bn(b, n + ".downsample.0", n + ".downsample.1", x, planes * expansion, 1, stride, 0);
            x = b.add1("add", n + ".add", {y, shortcut});
            x = b.add1("relu", n + ".relu_out", {x});
            in = planes * expansion;
        }
    }
    classifier(b, x, classes, "fc");
    return b.finish();
}

/// torchvision's _make_divisible: round to a multiple of 8, never more than 10% below.
std::int64_t make_divisible(double v, std::int64_t divisor = 8) {
    std::int64_t n = std::max<std::int64_t>(divisor, static_cast<std::int64_t>(v + divisor / 2.0) / divisor * divisor);
    if (static_cast<double>(n) < 0.9 * v) n += divisor;
    return n;
}

int relu6(graph_builder& b, const std::string& name, int x) {
    return b.add1("clip", name, {x}, op_attrs().f("min", 0).f("max", 6));
}

workload_graph build_mobilenet_v2(const workload_params& p) {
    const std::int64_t batch = p.positive("batch"), image = p.positive("image", 32), classes = p.positive("classes");
    const double width = p.number("width_mult");
    if (width <= 0) fail("generator mobilenet_v2: width_mult must be positive", p.find("width_mult")->where);
    // expand ratio t, output channels c, repeats n, first stride s (Table 2 of the paper).
    const std::int64_t setting[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                        {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    graph_builder b("mobilenet_v2", p.precision());
    int x = b.input("image", {batch, 3, image, image});
    std::int64_t in = make_divisible(32 * width);
    const std::int64_t last = make_divisible(1280 * std::max(1.0, width));
    x = conv_bn(b, "features.0.0", "features.0.1", x, in, 3, 2, 1);
    x = relu6(b, "features.0.2", x);
    int index = 1;
    for (const auto& s : setting) {
        const std::int64_t out = make_divisible(static_cast<double>(s[1]) * width);
        for (std::int64_t i = 0; i < s[2]; ++i, ++index) {
            const std::int64_t stride = i == 0 ? s[3] : 1;
            const std::int64_t hidden = static_cast<std::int64_t>(std::llround(static_cast<double>(in * s[0])));
            const std::string n = "features." + std::to_string(index) + ".conv";
            int y = x;
            int layer = 0;
            if (s[0] != 1) {
                const std::string l = n + "." + std::to_string(layer++);
                y = relu6(b, l + ".2", conv_bn(b, l + ".0", l + ".1", y, hidden, 1, 1, 0));
            }
            const std::string dw = n + "." + std::to_string(layer++);
            y = relu6(b, dw + ".2", conv_bn(b, dw + ".0", dw + ".1", y, hidden, 3, stride, 1, hidden));
            const std::string pw = n + "." + std::to_string(layer);
            y = conv_bn(b, pw, n + "." + std::to_string(layer + 1), y, out, 1, 1, 0);
            if (stride == 1 && in == out) y = b.add1("add", "features." + std::to_string(index) + ".add", {x, y});
            x = y;
            in = out;
        }
    }
    const std::string l = "features." + std::to_string(index);
    x = relu6(b, l + ".2", conv_bn(b, l + ".0", l + ".1", x, last, 1, 1, 0));
    classifier(b, x, classes, "classifier.1");
    return b.finish();
}

}  // namespace

generator_info resnet_generator() {
    generator_info g;
    g.name = "resnet";
    g.doc =
        "ResNet v1.5 for image classification (torchvision layout): 18 and 34 use basic blocks, "
        "50, 101 and 152 bottlenecks";
    g.params = {{"depth", "50", "18, 34, 50, 101 or 152 layers"},
                {"batch", "1", "images per step"},
                {"image", "224", "image height and width in pixels"},
                {"classes", "1000", "outputs of the final linear layer"}};
    g.build = build_resnet;
    return g;
}

generator_info mobilenet_v2_generator() {
    generator_info g;
    g.name = "mobilenet_v2";
    g.doc = "MobileNetV2 (torchvision layout): inverted residual blocks with depthwise 3x3 convolutions and ReLU6";
    g.params = {{"batch", "1", "images per step"},
                {"image", "224", "image height and width in pixels"},
                {"classes", "1000", "outputs of the classifier"},
                {"width_mult", "1.0", "multiplies every layer's channels (rounded to multiples of 8)"}};
    g.build = build_mobilenet_v2;
    return g;
}

}  // namespace tessel
