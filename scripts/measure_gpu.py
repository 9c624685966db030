#!/usr/bin/env python3
"""Measure kernel times on your own NVIDIA GPU in the JSON-lines format `tessel calibrate` reads.

    python3 scripts/measure_gpu.py --out my_gpu.jsonl            # every kernel of validation/gpu (a few minutes)
    python3 scripts/measure_gpu.py --quick --out my_gpu.jsonl    # a smaller set (about a minute)
    tessel calibrate --platform platforms/gpu/h100_sxm.yaml --measurements my_gpu.jsonl \\
        --out platforms/gpu/my_gpu.yaml --report my_gpu_report.md

Needs PyTorch with CUDA (any recent version; written against the 2.x API) and a GPU of compute capability 8.0
or newer (bf16 tensor cores). Start from the platform of the same GPU generation and change its hardware
numbers (SMs, clock, L2, HBM) to your part's before fitting; the fit then explains your measurements with the
few fitted parameters.

Method (the same as for validation/gpu/h100_microbenchmarks.jsonl; see validation/gpu/README.md): every
operand is allocated once; the op is captured --reps times back to back in one CUDA graph, the graph is
replayed once to warm up, then --replays times, each replay timed with CUDA events; the time of one kernel is
the median replay divided by --reps. Host launch overhead is therefore not in the figures, and each kernel
finds in L2 what the same kernel left there just before (the calibrator simulates exactly that). FP32 GEMMs
run without TF32.

Output: one JSON object per line. First {"kind": "device", ...}, then one row per kernel:
  gemm         dtype (bfloat16 | float32), M, N, K, sec, tflops     C[M,N] = A[M,K] @ B[K,N]
  copy         bytes_read, bytes_written, sec, gbps_rw              device-to-device copy
  elementwise  op (add | gelu), n, dtype, sec                       n elements
  rowwise      op (softmax | layernorm), rows, cols, dtype, sec     over the last dimension
  sdpa         B, H, S, D, causal, dtype, sec [, Sq]                scaled_dot_product_attention(q, k, v); Sq queries
`sec` is seconds per kernel. --suite operators adds conv (N, C, H, W, K, R, S, stride, pad, layout), batchnorm,
cross_entropy and optimizer rows, and on every row `kernels` and `kernel_names` (what the op launched, from
PyTorch's profiler); there `sec` is the whole op, all its kernels.
"""

import argparse
import json
import statistics
import sys

# The shapes of validation/gpu/h100_microbenchmarks.jsonl (so a new file can be compared row by row).
GEMM_SHAPES = [
    (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
    (8192, 8192, 8192),
    (1, 4096, 4096), (8, 4096, 4096), (32, 4096, 4096), (128, 4096, 4096), (512, 4096, 4096), (2048, 4096, 4096),
    (4096, 11008, 4096), (4096, 4096, 11008), (2048, 12288, 4096), (8192, 1024, 1024), (512, 512, 65536),
]
# FP32 runs on the FMA lanes, 15x slower: no 8192^3 and no Llama-sized shapes.
GEMM_SHAPES_FP32 = [s for s in GEMM_SHAPES if s[0] * s[1] * s[2] <= 4096 ** 3 and s[1] != 11008 and s[2] != 11008
                    and s[1] != 12288]
COPY_BYTES = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30]
ELEMENTWISE_N = [1 << 16, 1 << 20, 1 << 24, 1 << 27]
ROWWISE_SHAPES = [(4096, 1024), (16384, 4096)]
SDPA_SHAPES = [(1, 32, 2048, 128), (8, 16, 512, 64)]

# --suite operators: the shapes the first set left out (issue 15), kept apart so the first file stays as it was.
# Unaligned leading dimensions (vocab-sized N, K = 1500) beside their aligned neighbours, wave quantisation,
# tall-skinny / split-K, fp32 for a few of them.
OPS_GEMM = [
    (4096, 30522, 1024), (4096, 30528, 1024), (8192, 50257, 768), (8192, 50304, 768), (1024, 50257, 768),
    (4096, 4096, 1500), (4096, 4096, 1504), (1500, 1500, 1500), (2048, 2048, 1500), (4096, 1500, 4096),
    (3000, 3000, 3000), (5120, 5120, 5120), (6144, 6144, 6144), (2304, 2304, 2304), (3072, 3072, 3072),
    (1536, 1536, 1536), (7168, 7168, 2048), (8192, 8192, 128),
    (64, 1024, 65536), (128, 128, 65536), (256, 1024, 16384), (1024, 1024, 32768), (32, 8192, 8192),
    (16, 16384, 4096), (2048, 2048, 16384), (4096, 1024, 4096), (4096, 4096, 1024), (4096, 3072, 768),
    (4096, 768, 3072), (16384, 1024, 4096), (16384, 4096, 1024), (2048, 11008, 4096),
]
OPS_GEMM_FP32 = [(3000, 3000, 3000), (2048, 30522, 1024), (2048, 30528, 1024), (256, 1024, 16384),
                 (128, 128, 65536), (1536, 1536, 1536), (4096, 4096, 1500)]
# Long rows: 64 Mi elements each, rows of 1 Ki to 64 Ki.
OPS_ROWWISE = [(65536, 1024), (16384, 4096), (8192, 8192), (4096, 16384), (2048, 32768), (1024, 65536),
               (8192, 768), (4096, 4096)]
# (B, H, Sq, Skv, D, causal): long sequences, head dims, BERT shapes (not causal), one-query decode.
OPS_SDPA = [(1, 32, 8192, 8192, 128, True), (1, 16, 16384, 16384, 128, True), (4, 32, 4096, 4096, 128, True),
            (8, 16, 2048, 2048, 64, True), (8, 12, 1024, 1024, 64, True), (32, 16, 128, 128, 64, False),
            (8, 16, 512, 512, 64, False), (1, 32, 4096, 4096, 128, False), (1, 8, 4096, 4096, 256, True),
            (2, 32, 2048, 2048, 128, True), (8, 32, 1, 4096, 128, False), (1, 32, 1, 4096, 128, False),
            (32, 32, 1, 2048, 128, False), (1, 32, 1, 32768, 128, False), (64, 32, 1, 1024, 128, False)]
# ResNet-50's convolutions at batch 32 (N, C, H, W, K, R, stride, pad), NCHW and channels-last.
OPS_CONV = [(32, 3, 224, 224, 64, 7, 2, 3), (32, 64, 56, 56, 64, 1, 1, 0), (32, 64, 56, 56, 64, 3, 1, 1),
            (32, 64, 56, 56, 256, 1, 1, 0), (32, 256, 56, 56, 64, 1, 1, 0), (32, 128, 28, 28, 128, 3, 1, 1),
            (32, 256, 56, 56, 512, 1, 2, 0), (32, 256, 14, 14, 256, 3, 1, 1), (32, 1024, 14, 14, 256, 1, 1, 0),
            (32, 512, 7, 7, 512, 3, 1, 1), (32, 2048, 7, 7, 512, 1, 1, 0), (32, 512, 7, 7, 2048, 1, 1, 0),
            (1, 64, 56, 56, 64, 3, 1, 1), (1, 512, 7, 7, 512, 3, 1, 1)]
# Elementwise chains of eager code, on n bf16 values.
OPS_CHAIN_N = [1 << 20, 1 << 24, 1 << 26]

QUICK = {
    "gemm": [(1024, 1024, 1024), (4096, 4096, 4096), (1, 4096, 4096), (128, 4096, 4096), (8192, 1024, 1024)],
    "copy": [1 << 20, 64 << 20, 1 << 30],
    "elementwise": [1 << 20, 1 << 27],
}


def fail(msg):
    print("measure_gpu.py: " + msg, file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the JSON lines here (default: standard output)")
    ap.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    ap.add_argument("--reps", type=int, default=20, help="kernels captured back to back in one CUDA graph (20)")
    ap.add_argument("--replays", type=int, default=7, help="timed replays; the median is kept (7)")
    ap.add_argument("--kinds", default="gemm,copy,elementwise,rowwise,sdpa",
                    help="comma-separated kinds to measure (gemm, copy, elementwise, rowwise, sdpa)")
    ap.add_argument("--quick", action="store_true", help="a smaller set of shapes")
    ap.add_argument("--suite", choices=["calibration", "operators"], default="calibration",
                    help="calibration: the shapes of validation/gpu/h100_microbenchmarks.jsonl (default); "
                         "operators: unaligned and split-K GEMMs, long rows, attention, convolutions, "
                         "optimizer steps and eager chains (validation/gpu/h100_operators.jsonl)")
    ap.add_argument("--max-bytes", type=float, default=None,
                    help="skip kernels whose operands need more device memory than this (default: 45%% of the "
                         "GPU's memory)")
    args = ap.parse_args()
    if args.reps < 1 or args.replays < 1:
        fail("--reps and --replays must be at least 1")
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    known = {"gemm", "copy", "elementwise", "rowwise", "sdpa"}
    for k in kinds:
        if k not in known:
            fail("unknown kind '%s' in --kinds (%s)" % (k, ", ".join(sorted(known))))

    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        fail("needs PyTorch with CUDA (pip install torch)")
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA device")
    if args.device >= torch.cuda.device_count():
        fail("no CUDA device %d (%d present)" % (args.device, torch.cuda.device_count()))
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    # FP32 GEMMs on the FP32 lanes, as in the reference measurements (no TF32).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")

    props = torch.cuda.get_device_properties(dev)
    if props.major < 8:
        fail("%s is compute capability %d.%d; bf16 tensor cores need 8.0 or newer" % (props.name, props.major, props.minor))
    max_bytes = args.max_bytes if args.max_bytes is not None else 0.45 * props.total_memory

    out = open(args.out, "w") if args.out else sys.stdout

    def emit(row):
        out.write(json.dumps(row) + "\n")
        out.flush()
        if args.out:
            print(json.dumps(row), file=sys.stderr)

    device_row = {"kind": "device", "name": props.name, "sms": props.multi_processor_count,
                  "mem_bytes": props.total_memory}
    l2 = getattr(props, "L2_cache_size", None)  # PyTorch >= 2.1
    if l2:
        device_row["l2_bytes"] = l2
    device_row["torch"] = torch.__version__
    device_row["cuda"] = torch.version.cuda
    emit(device_row)

    def seconds_per_kernel(fn):
        """Captures fn --reps times in one CUDA graph; median seconds of one kernel over --replays replays."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up outside the graph: library handles, autotuning, workspaces
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(args.reps):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(args.replays):
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / args.reps)  # elapsed_time is in milliseconds
        del graph
        return statistics.median(times)

    def fits(nbytes):
        return nbytes <= max_bytes

    dtypes = {"bfloat16": torch.bfloat16, "float32": torch.float32}

    if args.suite == "operators":
        measure_operators(torch, F, dev, emit, seconds_per_kernel, fits)
        if args.out:
            out.close()
        return

    if "gemm" in kinds:
        for name in ("bfloat16", "float32"):
            t = dtypes[name]
            shapes = QUICK["gemm"] if args.quick else (GEMM_SHAPES if name == "bfloat16" else GEMM_SHAPES_FP32)
            for (m, n, k) in shapes:
                es = torch.finfo(t).bits // 8
                if not fits(es * (m * k + k * n + m * n)):
                    continue
                a = torch.randn(m, k, device=dev, dtype=t)
                b = torch.randn(k, n, device=dev, dtype=t)
                c = torch.empty(m, n, device=dev, dtype=t)
                sec = seconds_per_kernel(lambda: torch.matmul(a, b, out=c))
                emit({"kind": "gemm", "dtype": name, "M": m, "N": n, "K": k, "sec": sec,
                      "tflops": 2.0 * m * n * k / sec / 1e12})
                del a, b, c
                torch.cuda.empty_cache()

    if "copy" in kinds:
        for nbytes in (QUICK["copy"] if args.quick else COPY_BYTES):
            if not fits(2 * nbytes):
                continue
            src = torch.empty(nbytes, device=dev, dtype=torch.uint8).random_(0, 256)
            dst = torch.empty_like(src)
            sec = seconds_per_kernel(lambda: dst.copy_(src))
            emit({"kind": "copy", "bytes_read": nbytes, "bytes_written": nbytes, "sec": sec,
                  "gbps_rw": 2.0 * nbytes / sec / 1e9})
            del src, dst
            torch.cuda.empty_cache()

    if "elementwise" in kinds:
        for n in (QUICK["elementwise"] if args.quick else ELEMENTWISE_N):
            if not fits(3 * 2 * n):
                continue
            x = torch.randn(n, device=dev, dtype=torch.bfloat16)
            y = torch.randn(n, device=dev, dtype=torch.bfloat16)
            z = torch.empty_like(x)
            sec = seconds_per_kernel(lambda: torch.add(x, y, out=z))
            emit({"kind": "elementwise", "op": "add", "n": n, "dtype": "bfloat16", "sec": sec})
            # gelu has no out= variant: its output is allocated from the graph's private pool, once per
            # captured call, which the replay reuses.
            sec = seconds_per_kernel(lambda: F.gelu(x))
            emit({"kind": "elementwise", "op": "gelu", "n": n, "dtype": "bfloat16", "sec": sec})
            del x, y, z
            torch.cuda.empty_cache()

    if "rowwise" in kinds and not args.quick:
        for (rows, cols) in ROWWISE_SHAPES:
            x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
            w = torch.ones(cols, device=dev, dtype=torch.bfloat16)
            bias = torch.zeros(cols, device=dev, dtype=torch.bfloat16)
            sec = seconds_per_kernel(lambda: torch.softmax(x, dim=-1))
            emit({"kind": "rowwise", "op": "softmax", "rows": rows, "cols": cols, "dtype": "bfloat16", "sec": sec})
            sec = seconds_per_kernel(lambda: F.layer_norm(x, (cols,), w, bias))
            emit({"kind": "rowwise", "op": "layernorm", "rows": rows, "cols": cols, "dtype": "bfloat16", "sec": sec})
            del x, w, bias
            torch.cuda.empty_cache()

    if "sdpa" in kinds and not args.quick:
        for (b, h, s, d) in SDPA_SHAPES:
            q = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
            k = torch.randn_like(q)
            v = torch.randn_like(q)
            sec = seconds_per_kernel(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
            emit({"kind": "sdpa", "B": b, "H": h, "S": s, "D": d, "causal": True, "dtype": "bfloat16", "sec": sec})
            del q, k, v
            torch.cuda.empty_cache()

    if args.out:
        out.close()


def kernels_of(torch, fn):
    """The GPU kernels one call of fn launches, as (name, microseconds), from PyTorch's profiler."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            out.append((e.name, e.time_range.elapsed_us()))
    return out


def measure_operators(torch, F, dev, emit, seconds_per_kernel, fits):
    """The operator-level set: every row also names the kernels the op launched (eager PyTorch), so that
    `sec` (the op's graph-replayed time) can be compared kernel by kernel."""
    bf16 = torch.bfloat16

    def row(fields, fn):
        try:
            sec = seconds_per_kernel(fn)
            ks = kernels_of(torch, fn)
            fields = dict(fields)
            fields["sec"] = sec
            fields["kernels"] = len(ks)
            fields["kernel_names"] = sorted(set(k[0][:96] for k in ks))
            emit(fields)
        except Exception as e:  # one op that fails (memory, unsupported) must not lose the rest
            print("measure_gpu.py: skipped %s: %s" % (fields, e), file=sys.stderr)
        torch.cuda.empty_cache()

    for (name, t, shapes) in (("bfloat16", bf16, OPS_GEMM), ("float32", torch.float32, OPS_GEMM_FP32)):
        for (m, n, k) in shapes:
            if not fits((m * k + k * n + m * n) * (2 if t == bf16 else 4)):
                continue
            a = torch.randn(m, k, device=dev, dtype=t)
            b = torch.randn(k, n, device=dev, dtype=t)
            c = torch.empty(m, n, device=dev, dtype=t)
            row({"kind": "gemm", "dtype": name, "M": m, "N": n, "K": k, "set": "operators"},
                lambda: torch.matmul(a, b, out=c))
            del a, b, c

    for (rows, cols) in OPS_ROWWISE:
        x = torch.randn(rows, cols, device=dev, dtype=bf16)
        w = torch.ones(cols, device=dev, dtype=bf16)
        bias = torch.zeros(cols, device=dev, dtype=bf16)
        base = {"kind": "rowwise", "rows": rows, "cols": cols, "dtype": "bfloat16", "set": "operators"}
        row(dict(base, op="softmax"), lambda: torch.softmax(x, dim=-1))
        row(dict(base, op="layernorm"), lambda: F.layer_norm(x, (cols,), w, bias))
        row(dict(base, op="rmsnorm"), lambda: F.rms_norm(x, (cols,), w))
        # Hugging Face's LlamaRMSNorm, as eager code runs it: fp32 upcast, pow, mean, rsqrt, two muls, downcast.
        def hf_rmsnorm():
            h = x.to(torch.float32)
            var = h.pow(2).mean(-1, keepdim=True)
            h = h * torch.rsqrt(var + 1e-6)
            return w * h.to(bf16)
        row(dict(base, op="rmsnorm_hf_eager"), hf_rmsnorm)
        del x, w, bias

    for (b, h, sq, skv, d, causal) in OPS_SDPA:
        q = torch.randn(b, h, sq, d, device=dev, dtype=bf16)
        k = torch.randn(b, h, skv, d, device=dev, dtype=bf16)
        v = torch.randn_like(k)
        fields = {"kind": "sdpa", "B": b, "H": h, "S": skv, "D": d, "causal": causal, "dtype": "bfloat16",
                  "set": "operators"}
        if sq != skv:
            fields["Sq"] = sq
        row(fields, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        del q, k, v

    for (n, c, hh, ww, kk, r, stride, pad) in OPS_CONV:
        for layout in ("nchw", "nhwc"):
            fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
            x = torch.randn(n, c, hh, ww, device=dev, dtype=bf16).to(memory_format=fmt)
            w = torch.randn(kk, c, r, r, device=dev, dtype=bf16).to(memory_format=fmt)
            row({"kind": "conv", "N": n, "C": c, "H": hh, "W": ww, "K": kk, "R": r, "S": r, "stride": stride,
                 "pad": pad, "layout": layout, "dtype": "bfloat16", "set": "operators"},
                lambda: F.conv2d(x, w, stride=stride, padding=pad))
            del x, w
        x = torch.randn(n, c, hh, ww, device=dev, dtype=bf16)
        bn_w = torch.ones(c, device=dev, dtype=bf16)
        bn_b = torch.zeros(c, device=dev, dtype=bf16)
        rm = torch.zeros(c, device=dev, dtype=bf16)
        rv = torch.ones(c, device=dev, dtype=bf16)
        row({"kind": "batchnorm", "N": n, "C": c, "H": hh, "W": ww, "training": True, "dtype": "bfloat16",
             "set": "operators"}, lambda: F.batch_norm(x, rm, rv, bn_w, bn_b, training=True))
        del x

    for n in OPS_CHAIN_N:
        x = torch.randn(n, device=dev, dtype=bf16)
        base = {"kind": "elementwise", "n": n, "dtype": "bfloat16", "set": "operators"}
        row(dict(base, op="gelu"), lambda: F.gelu(x))
        row(dict(base, op="gelu_tanh"), lambda: F.gelu(x, approximate="tanh"))
        row(dict(base, op="gelu_new_hf_eager"),
            lambda: 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0)))))
        row(dict(base, op="silu"), lambda: F.silu(x))
        row(dict(base, op="dropout"), lambda: F.dropout(x, p=0.1, training=True))
        row(dict(base, op="mul"), lambda: x * x)
        del x

    # Cross-entropy as eager code runs it: fp32 log-softmax over the logits, then nll (forward only here).
    for (rows, vocab) in ((8192, 50257), (4096, 30522), (2048, 32000)):
        logits = torch.randn(rows, vocab, device=dev, dtype=bf16)
        target = torch.randint(0, vocab, (rows,), device=dev)
        row({"kind": "cross_entropy", "rows": rows, "cols": vocab, "dtype": "bfloat16", "upcast": "float32",
             "set": "operators"}, lambda: F.cross_entropy(logits.float(), target))
        del logits, target

    # Optimizer steps over real models' parameter lists (fp32 master weights, as mixed precision keeps them).
    shapes = {"gpt2_small": [(50257, 768), (1024, 768)] + [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,),
                                                            (768,), (768,), (768, 3072), (3072,), (3072, 768),
                                                            (768,)] * 12 + [(768,), (768,)],
              "bert_large": [(30522, 1024), (512, 1024), (2, 1024), (1024,), (1024,)] +
                            [(1024, 1024), (1024,)] * 4 * 24 + [(1024,), (1024,), (4096, 1024), (4096,),
                                                                (1024, 4096), (1024,), (1024,), (1024,)] * 24}
    for model, shp in shapes.items():
        params = [torch.zeros(s, device=dev, dtype=torch.float32, requires_grad=True) for s in shp]
        for p in params:
            p.grad = torch.randn_like(p)
        nparams = sum(p.numel() for p in params)
        for impl in ("foreach", "fused"):
            for name, cls in (("adamw", torch.optim.AdamW), ("sgd", torch.optim.SGD)):
                kw = {"lr": 1e-4}
                if name == "sgd":
                    kw["momentum"] = 0.9
                else:
                    kw["capturable"] = True
                kw[impl] = True
                try:
                    opt = cls(params, **kw)
                except Exception as e:
                    print("measure_gpu.py: skipped %s %s: %s" % (name, impl, e), file=sys.stderr)
                    continue
                row({"kind": "optimizer", "op": name, "impl": impl, "model": model, "params": nparams,
                     "tensors": len(params), "dtype": "float32", "set": "operators"}, opt.step)
                del opt
        del params


if __name__ == "__main__":
    main()
