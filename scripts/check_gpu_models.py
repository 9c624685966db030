#!/usr/bin/env python3
"""Compare tessel's GPU baseline with whole models measured on a real GPU (the held-out check).

    python3 scripts/check_gpu_models.py                      # h100_sxm against validation/gpu/h100_models.jsonl
    python3 scripts/check_gpu_models.py --tessel path/to/tessel --platform h100_sxm --markdown
    python3 scripts/check_gpu_models.py --framework eager    # the kernels eager PyTorch launches (as measured)

Each row of the measurements (scripts/measure_gpu_models.py writes them) names a model, a mode and a shape; this
script runs the same workload with `tessel run` and prints measured kernel time (the sum of the step's GPU
kernels), simulated time and the error, and the kernel counts of both. The measurements are never fitted:
`tessel calibrate` sees kernels only. Needs only the Python standard library.
"""

import json
import subprocess
import sys

from gpu_check_report import comparison_parser, print_comparison



def tessel_args(row):
    """The `tessel run` arguments for one measured case, or None when tessel has no such workload."""
    model, mode, batch = row["model"], row["mode"], row["batch"]
    sets = ["workload.batch=%d" % batch, "workload.precision=bf16"]
    # The measured runs: Hugging Face models use PyTorch's SDPA attention (transformers' default; cuDNN's flash
    # kernels), train with dropout 0.1 (their configs' default, in train mode), and the BERT training row is
    # BertForMaskedLM (no pooler; the masked-LM head over every token).
    if model != "resnet50":
        sets.append("workload.attention=fused")
    if mode == "training" and model in ("bert_base", "bert_large", "gpt2"):
        sets.append("workload.dropout=0.1")
    if mode == "training" and row.get("head", "").startswith("masked LM"):
        sets += ["workload.pooler=false", "workload.mlm_head=true"]
    if model == "resnet50":
        w = "resnet50"
    elif model in ("bert_base", "bert_large"):
        w = "bert-base" if model == "bert_base" else "bert-large"
        sets.append("workload.seq=%d" % row["seq"])
    elif model == "gpt2":
        w = "gpt2"
        sets.append("workload.seq=%d" % row["seq"])
    elif model == "llama2-7b":
        if not row.get("lm_head"):
            return None  # tessel's llama graph ends in the LM head; the row measured LlamaModel without it
        w = "llama2-7b"
        sets.append("workload.layers=%d" % row["layers"])
        sets.append("workload.mode=%s" % mode)
        if mode == "prefill":
            sets.append("workload.seq=%d" % row["seq"])
        else:
            # The measured runs used Hugging Face's dynamic cache, which copies the cache with the new token
            # (torch.cat) every step instead of writing it in place.
            sets += ["workload.kv_cache=%d" % row["kv"], "workload.kv_cache_update=copy"]
    else:
        return None
    if mode == "training":
        sets.append("workload.training=%s" % ("sgd" if row.get("optimizer") == "sgd" else "adam"))
    args = ["-w", w]
    for s in sets:
        args += ["--set", s]
    return args


def main():
    ap = comparison_parser(__doc__.split("\n\n")[0], "h100_models.jsonl")
    ap.add_argument("--framework", choices=("ops", "eager"), default="ops",
                    help="the kernels mapper's framework: one kernel per op, or the kernels eager PyTorch launches")
    args = ap.parse_args()
    rows = []
    with open(args.measurements) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("kind") == "model":
                rows.append(r)
    if not rows:
        sys.exit("check_gpu_models.py: no model rows in " + args.measurements)
    out = []
    for r in rows:
        targs = tessel_args(r)
        if targs is None:
            out.append((r["case"], r["kernel_sec"], None, r["kernels"], None,
                        "not compared (no tessel workload of the same structure)"))
            continue
        cmd = [args.tessel, "run", "-p", args.platform, "--json", "--set", "mapper.framework=" + args.framework] + targs
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            out.append((r["case"], r["kernel_sec"], None, r["kernels"], None, p.stderr.strip().splitlines()[-1]))
            continue
        s = json.loads(p.stdout)
        out.append((r["case"], r["kernel_sec"], s["sim_time_s"], r["kernels"], s["steps"], ""))
    print_comparison(out, "case", "tessel steps", "ms", "models", args.markdown, 36)

if __name__ == "__main__":
    main()
