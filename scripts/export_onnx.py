#!/usr/bin/python3
"""Exports the ONNX test fixtures in workloads/onnx/ from PyTorch, with the weights stripped.

Run with Debian's Python, which has the packages this needs (python3-torch 1.13, python3-torchvision 0.14,
python3-onnx 1.12):

    /usr/bin/python3 scripts/export_onnx.py            # writes workloads/onnx/*.onnx

Fixtures (each well under 1 MB: the graph and every tensor's shape and type are kept, the weight data is
not; float initializers point to external data in a file that does not exist, which is how a model whose
weights were left behind looks to an importer):

  resnet18.onnx, resnet50.onnx, mobilenet_v2.onnx   torchvision models, opset 17, dynamic batch
  bert_tiny.onnx                                     a 2-layer BERT encoder (embeddings, attention, GELU,
                                                     LayerNorm, pooler), opset 17, dynamic batch
  gpt2.onnx                                          GPT-2 small (124M) with causal mask (Trilu, Where) and
                                                     the LM head tied to the token embedding, exported
                                                     without constant folding (Transpose of weights, Range,
                                                     Shape arithmetic stay in the graph), opset 17
  bert_tiny_opset20.onnx                             bert_tiny rewritten to opset 20: LayerNormalization
                                                     decomposed with ReduceMean taking its axes as an input
                                                     (opset 18), the erf GELU pattern fused into Gelu
                                                     (opset 20), value_info removed - newer than the
                                                     installed libonnx (1.12, opset 17) knows, so the
                                                     importer must infer shapes itself.

The sizes of bert_tiny are mirrored by workloads/onnx/bert_tiny.yaml (the bert generator with the same
parameters), so tests can compare the importer with the generator.
"""

import io
import math
import os
import sys

import onnx
import torch
import torchvision
from onnx import helper, numpy_helper

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "onnx"))
FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16}

# bert_tiny's configuration (keep in step with workloads/onnx/bert_tiny.yaml).
BERT_TINY = dict(vocab=1000, hidden=128, layers=2, heads=2, ffn=512, max_position=128, type_vocab=2, seq=32)


def randomise(model):
    """Distinct values in every parameter and buffer, so the exporter's initializer deduplication (identical
    freshly initialised BatchNorm statistics) does not merge tensors that are separate in the model."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.02)
        for name, b in model.named_buffers():
            if b.is_floating_point():
                b.copy_(torch.rand_like(b) + 0.5)


def export(model, args, name, input_names, output_names, dynamic_axes, opset=17, fold=True):
    model.eval()
    f = io.BytesIO()
    torch.onnx.export(model, args, f, opset_version=opset, input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic_axes, do_constant_folding=fold,
                      # PRESERVE keeps BatchNormalization (EVAL would fold it into the convolutions).
                      training=torch.onnx.TrainingMode.PRESERVE)
    return onnx.load_from_string(f.getvalue())


def strip_weights(model, name):
    """Float initializers keep dims and type; their data moves to an external file that is never written."""
    location = name + ".weights.bin"
    offset = 0
    for init in model.graph.initializer:
        n = 1
        for d in init.dims:
            n *= d
        if init.data_type not in FLOAT_TYPES or n <= 16:
            continue
        nbytes = n * (2 if init.data_type in (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16) else 4)
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.ClearField("double_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(nbytes))):
            e = init.external_data.add()
            e.key, e.value = k, v
        offset += nbytes
    return model


def save(model, name):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print(f"{path}: {os.path.getsize(path) / 1024:.0f} KiB, {len(model.graph.node)} nodes, opset "
          f"{model.opset_import[0].version}")


# ---------------------------------------------------------------------------------------------- models

class BertTiny(torch.nn.Module):
    """BERT as in Hugging Face's BertModel: word + token-type + position embeddings, LayerNorm, post-norm
    encoder layers with separate query/key/value projections, GELU feed-forward, and the tanh pooler."""

    def __init__(self, vocab, hidden, layers, heads, ffn, max_position, type_vocab, seq):
        super().__init__()
        self.heads = heads
        self.word = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Embedding(max_position, hidden)
        self.token_type = torch.nn.Embedding(type_vocab, hidden)
        self.ln = torch.nn.LayerNorm(hidden)
        self.register_buffer("position_ids", torch.arange(max_position).unsqueeze(0), persistent=False)
        self.layers = torch.nn.ModuleList()
        for _ in range(layers):
            layer = torch.nn.Module()
            layer.query = torch.nn.Linear(hidden, hidden)
            layer.key = torch.nn.Linear(hidden, hidden)
            layer.value = torch.nn.Linear(hidden, hidden)
            layer.out = torch.nn.Linear(hidden, hidden)
            layer.ln1 = torch.nn.LayerNorm(hidden)
            layer.fc1 = torch.nn.Linear(hidden, ffn)
            layer.fc2 = torch.nn.Linear(ffn, hidden)
            layer.ln2 = torch.nn.LayerNorm(hidden)
            self.layers.append(layer)
        self.pooler = torch.nn.Linear(hidden, hidden)
        self.gelu = torch.nn.GELU()

    def split(self, x):
        b, s, h = x.shape
        return x.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, input_ids, token_type_ids):
        s = input_ids.shape[1]
        x = self.word(input_ids) + self.token_type(token_type_ids) + self.position(self.position_ids[:, :s])
        x = self.ln(x)
        for layer in self.layers:
            b, s, h = x.shape
            q, k, v = self.split(layer.query(x)), self.split(layer.key(x)), self.split(layer.value(x))
            scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
            ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h)
            x = layer.ln1(layer.out(ctx) + x)
            x = layer.ln2(layer.fc2(self.gelu(layer.fc1(x))) + x)
        return torch.tanh(self.pooler(x[:, 0]))


class GPT2(torch.nn.Module):
    """GPT-2 small: pre-norm decoder, fused QKV projection split in three, causal mask built in the graph
    (triu, masked_fill), tanh-approximated GELU, LM head tied to the token embedding."""

    def __init__(self, vocab=50257, context=1024, hidden=768, layers=12, heads=12):
        super().__init__()
        self.heads = heads
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Embedding(context, hidden)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            blk = torch.nn.Module()
            blk.ln_1 = torch.nn.LayerNorm(hidden)
            blk.c_attn = torch.nn.Linear(hidden, 3 * hidden)
            blk.c_proj = torch.nn.Linear(hidden, hidden)
            blk.ln_2 = torch.nn.LayerNorm(hidden)
            blk.c_fc = torch.nn.Linear(hidden, 4 * hidden)
            blk.mlp_proj = torch.nn.Linear(4 * hidden, hidden)
            self.blocks.append(blk)
        self.ln_f = torch.nn.LayerNorm(hidden)
        self.gelu = torch.nn.GELU(approximate="tanh")

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.wte(input_ids) + self.wpe(torch.arange(s))
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
        for blk in self.blocks:
            h = x.shape[2]
            d = h // self.heads
            q, k, v = blk.c_attn(blk.ln_1(x)).split(h, dim=2)
            q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
            scores = (q @ k.transpose(-1, -2) / math.sqrt(d)).masked_fill(mask, float("-inf"))
            ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h)
            x = x + blk.c_proj(ctx)
            x = x + blk.mlp_proj(self.gelu(blk.c_fc(blk.ln_2(x))))
        return self.ln_f(x) @ self.wte.weight.t()


# ------------------------------------------------------------------------------- opset 20 rewriting

def to_opset20(model):
    """Rewrites bert_tiny in the forms of opsets newer than libonnx 1.12 knows: LayerNormalization becomes
    the ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add chain with ReduceMean's axes as an input (opset
    18), the Div/Erf/Add/Mul/Mul GELU becomes one Gelu (opset 20); value_info is dropped."""
    g = model.graph
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    producer = {o: n for n in g.node for o in n.output}
    new_nodes = []
    inits = []
    removed = set()

    def const(name, value, dtype=onnx.TensorProto.INT64):
        inits.append(helper.make_tensor(name, dtype, [len(value)] if isinstance(value, list) else [],
                                        value if isinstance(value, list) else [value]))
        return name

    for n in g.node:
        if id(n) in removed:
            continue
        if n.op_type == "LayerNormalization":
            x, scale, bias = n.input[0], n.input[1], n.input[2]
            p = n.name or n.output[0]
            axes = const(p + "/axes", [-1])
            eps = [a.f for a in n.attribute if a.name == "epsilon"] or [1e-5]
            two = const(p + "/two", 2.0, onnx.TensorProto.FLOAT)
            epsilon = const(p + "/epsilon", eps[0], onnx.TensorProto.FLOAT)
            new_nodes += [
                helper.make_node("ReduceMean", [x, axes], [p + "/mean"], name=p + "/ReduceMean", keepdims=1),
                helper.make_node("Sub", [x, p + "/mean"], [p + "/centered"], name=p + "/Sub"),
                helper.make_node("Pow", [p + "/centered", two], [p + "/squared"], name=p + "/Pow"),
                helper.make_node("ReduceMean", [p + "/squared", axes], [p + "/var"], name=p + "/ReduceMean_1", keepdims=1),
                helper.make_node("Add", [p + "/var", epsilon], [p + "/var_eps"], name=p + "/Add"),
                helper.make_node("Sqrt", [p + "/var_eps"], [p + "/std"], name=p + "/Sqrt"),
                helper.make_node("Div", [p + "/centered", p + "/std"], [p + "/normalised"], name=p + "/Div"),
                helper.make_node("Mul", [p + "/normalised", scale], [p + "/scaled"], name=p + "/Mul"),
                helper.make_node("Add", [p + "/scaled", bias], [n.output[0]], name=p + "/Add_1"),
            ]
            continue
        if n.op_type == "Div" and n.input[0] in producer and consumers.get(n.output[0], [None])[0] is not None \
                and consumers[n.output[0]][0].op_type == "Erf":
            # x / sqrt(2) -> Erf -> + 1 -> x * . -> * 0.5
            erf = consumers[n.output[0]][0]
            add = consumers[erf.output[0]][0]
            mul = consumers[add.output[0]][0]
            half = consumers[mul.output[0]][0]
            assert (add.op_type, mul.op_type, half.op_type) == ("Add", "Mul", "Mul"), "unexpected GELU pattern"
            for m in (erf, add, mul, half):
                removed.add(id(m))
            new_nodes.append(helper.make_node("Gelu", [n.input[0]], [half.output[0]], name=(n.name or "gelu") + "/Gelu"))
            continue
        new_nodes.append(n)
    # Constants only the replaced GELU nodes read (sqrt(2), 1, 0.5) go too.
    used = {i for n in new_nodes for i in n.input} | {o.name for o in g.output}
    new_nodes = [n for n in new_nodes if n.op_type != "Constant" or any(o in used for o in n.output)]
    del g.node[:]
    g.node.extend(new_nodes)
    g.initializer.extend(inits)
    del g.value_info[:]
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 20))
    model.ir_version = 9
    return model


def main():
    batch = {0: "batch"}
    for name, ctor in (("resnet18", torchvision.models.resnet18), ("resnet50", torchvision.models.resnet50),
                       ("mobilenet_v2", torchvision.models.mobilenet_v2)):
        m = ctor()
        randomise(m)
        model = export(m, torch.randn(1, 3, 224, 224), name, ["image"], ["logits"], {"image": batch, "logits": batch})
        save(strip_weights(model, name), name)

    m = BertTiny(**BERT_TINY)
    randomise(m)
    ids = torch.randint(0, BERT_TINY["vocab"], (1, BERT_TINY["seq"]))
    types = torch.zeros(1, BERT_TINY["seq"], dtype=torch.long)
    bert = export(m, (ids, types), "bert_tiny", ["input_ids", "token_type_ids"], ["pooled"],
                  {"input_ids": batch, "token_type_ids": batch, "pooled": batch})
    save(strip_weights(onnx.load_from_string(bert.SerializeToString()), "bert_tiny"), "bert_tiny")
    save(strip_weights(to_opset20(bert), "bert_tiny_opset20"), "bert_tiny_opset20")

    m = GPT2()
    randomise(m)
    gpt = export(m, torch.randint(0, 50257, (1, 64)), "gpt2", ["input_ids"], ["logits"],
                 {"input_ids": batch, "logits": batch}, fold=False)
    save(strip_weights(gpt, "gpt2"), "gpt2")


if __name__ == "__main__":
    sys.exit(main())
