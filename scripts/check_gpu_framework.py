#!/usr/bin/env python3
"""Compare tessel's eager framework mode with ops measured as eager PyTorch runs them (several kernels each).

    python3 scripts/check_gpu_framework.py                       # h100_sxm against validation/gpu/h100_framework.jsonl
    python3 scripts/check_gpu_framework.py --markdown

Each row of validation/gpu/h100_framework.jsonl is one op as eager PyTorch ran it on an H100 (the sum of its
kernels' times inside a CUDA graph, and how many kernels it launched). This script builds the same op as a small
workload, runs it with `tessel run --set mapper.framework=eager` and sums the times of the kernels that op became
(for a training batch norm and the cross-entropy, only the forward kernels the row measured). Rows tessel runs
differently from the measurement (capturable AdamW; the fused optimizers) are listed as not compared. Needs only the Python standard library.
"""

import json
import os
import subprocess
import sys
import tempfile

from gpu_check_report import comparison_parser, print_comparison



def shape(dims):
    return "[" + ", ".join(str(d) for d in dims) + "]"


def workload(row):
    """(YAML text, framework, which kernels to sum: a name prefix test) for one row, or (None, reason)."""
    kind, op = row["kind"], row.get("op")
    head = "workload: check\nparameters: {precision: %s%s}\ntensors:\n"
    if kind == "rowwise" and op == "rmsnorm_hf_eager":
        text = (head % ("bf16", "") + "  x: {shape: %s, role: input}\n  w: {shape: [%d], role: weight}\n"
                "ops:\n  - {name: norm, op: rmsnorm, inputs: [x, w]}\n") % (shape([row["rows"], row["cols"]]), row["cols"])
        return text, "eager", lambda n: True
    if kind == "conv" and row.get("layout") == "nchw":
        text = (head % ("bf16", "") + "  x: {shape: %s, role: input}\n  w: {shape: %s, role: weight}\n"
                "ops:\n  - {name: conv, op: conv2d, inputs: [x, w], stride: %d, padding: %d}\n") % (
            shape([row["N"], row["C"], row["H"], row["W"]]), shape([row["K"], row["C"], row["R"], row["S"]]),
            row["stride"], row["pad"])
        return text, "eager", lambda n: True
    if kind == "batchnorm" and row.get("training"):
        c = row["C"]
        text = (head % ("bf16", ", training: sgd") + "  x: {shape: %s, role: input}\n"
                "  scale: {shape: [%d], role: weight}\n  bias: {shape: [%d], role: weight}\n"
                "  mean: {shape: [%d], role: state}\n  var: {shape: [%d], role: state}\n"
                "ops:\n  - {name: bn, op: batchnorm, inputs: [x, scale, bias, mean, var]}\n") % (
            shape([row["N"], c, row["H"], row["W"]]), c, c, c, c)
        forward = ("bn.statistics", "bn.running_stats", "bn.transform")
        return text, "eager", lambda n: n in forward
    if kind == "elementwise" and op in ("gelu_tanh", "gelu_new_hf_eager", "square", "dropout"):
        x = "  x: {shape: [%d], role: input}\n" % row["n"]
        if op == "square":
            body = "  - {name: y, op: mul, inputs: [x, x]}\n"
        elif op == "dropout":
            body = "  - {name: y, op: dropout, inputs: [x], ratio: 0.1}\n"
        else:
            body = "  - {name: y, op: gelu, inputs: [x], approximate: tanh}\n"
        # torch's own tanh GELU is one kernel; Hugging Face's gelu_new writes the formula out (eager chain).
        return head % ("bf16", "") + x + "ops:\n" + body, "eager" if op in ("gelu_new_hf_eager", "dropout") else "ops", lambda n: True
    if kind == "cross_entropy":
        # 16-bit logits from a (small) projection, as a model's head gives them.
        text = (head % ("bf16", ", training: sgd") + "  x: {shape: %s, role: input}\n  w: {shape: [8, %d], role: weight}\n"
                "ops:\n  - {name: logits, op: matmul, inputs: [x, w]}\n") % (shape([row["rows"], 8]), row["cols"])
        forward = ["logits.loss_grad." + k for k in ("to_fp32", "log_softmax", "nll")]
        return text, "eager", lambda n: n in forward
    if kind == "optimizer" and row.get("impl") == "foreach" and row.get("op") == "sgd":
        shapes = OPTIMIZER_SHAPES.get(row.get("model"))
        if not shapes:
            return None, "no parameter list for model '%s'" % row.get("model")
        tensors, ops = [], []
        for i, s in enumerate(shapes):
            tensors.append("  p%d: {shape: %s, role: weight}\n" % (i, shape(s)))
            ops.append("  - {name: use%d, op: relu, inputs: [p%d]}\n" % (i, i))
        text = head % ("fp32", ", training: sgd") + "".join(tensors) + "ops:\n" + "".join(ops)
        return text, "eager", lambda n: n.startswith("optimizer.")
    if kind == "optimizer":
        return None, "not compared (tessel's eager AdamW is the default, not capturable; fused optimizers are one kernel per op)"
    return None, "not compared (no such op)"


# The parameter lists scripts/measure_gpu.py steps its optimizers over (Hugging Face GPT-2 small, BERT-large).
OPTIMIZER_SHAPES = {
    "gpt2_small": [(50257, 768), (1024, 768)] + [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,),
                                                 (768,), (768,), (768, 3072), (3072,), (3072, 768), (768,)] * 12
                  + [(768,), (768,)],
    "bert_large": [(30522, 1024), (512, 1024), (2, 1024), (1024,), (1024,)] + [(1024, 1024), (1024,)] * 4 * 24
                  + [(1024,), (1024,), (4096, 1024), (4096,), (1024, 4096), (1024,), (1024,), (1024,)] * 24,
}


def label(row):
    kind, op = row["kind"], row.get("op")
    if kind == "rowwise":
        return "%s %dx%d" % (op, row["rows"], row["cols"])
    if kind == "conv":
        return "conv nchw %dx%dx%dx%d k%d %dx%d/%d" % (row["N"], row["C"], row["H"], row["W"], row["K"], row["R"],
                                                       row["S"], row["stride"])
    if kind == "batchnorm":
        return "batchnorm train %dx%dx%dx%d" % (row["N"], row["C"], row["H"], row["W"])
    if kind == "elementwise":
        return "%s n=%d" % (op, row["n"])
    if kind == "cross_entropy":
        return "cross_entropy %dx%d (forward)" % (row["rows"], row["cols"])
    if kind == "optimizer":
        return "%s %s %s" % (row["op"], row["impl"], row["model"])
    return kind


def main():
    ap = comparison_parser(__doc__.split("\n\n")[0], "h100_framework.jsonl")
    args = ap.parse_args()
    out = []
    with open(args.measurements) as f, tempfile.TemporaryDirectory() as tmp:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("kind") == "device":
                continue
            spec = workload(row)
            if spec[0] is None:
                out.append((label(row), row["sec"], None, row.get("kernels"), None, spec[1]))
                continue
            text, framework, keep = spec
            path = os.path.join(tmp, "row%d.yaml" % n)
            with open(path, "w") as w:
                w.write(text)
            cmd = [args.tessel, "run", "-p", args.platform, "-w", path, "--json", "--set", "mapper.framework=" + framework]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("check_gpu_framework.py: %s:%d: tessel failed: %s" % (args.measurements, n, p.stderr.strip()))
            kernels = [k for k in json.loads(p.stdout)["mapping"]["kernels"] if keep(k["name"])]
            out.append((label(row), row["sec"], sum(k["time_s"] for k in kernels), row.get("kernels"), len(kernels), ""))
    print_comparison(out, "op (eager PyTorch)", "tessel kernels", "us", "ops", args.markdown, 44)

if __name__ == "__main__":
    main()
