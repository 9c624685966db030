#!/usr/bin/env python3
"""Measure whole models on your own NVIDIA GPU as eager PyTorch runs them: the held-out check of the GPU baseline.

    python3 scripts/measure_gpu_models.py --out validation/gpu/h100_models.jsonl

Needs PyTorch with CUDA, torchvision and Hugging Face transformers (the models are built from their configs with
random weights: nothing is downloaded). These figures are never fitted: `tessel calibrate` fits kernels, and
docs/validation.md compares tessel's whole-model times against these.

Each row is one model step (inference forward, or a training step: forward, backward, optimizer):
  kernel_sec   the sum of the GPU kernel times of one step (PyTorch's profiler), the figure tessel's per-kernel
               simulation is compared with (host launch overhead excluded)
  wall_sec     the median wall time of one step with the GPU synchronised after it (launch overhead included)
  kernels      how many kernels one step launched
  top          the 40 kernel names with the most time: [name, count, microseconds]
  power_w_mean, power_w_max, power_seconds
               with --power S: the board power (NVML) while the step ran back to back for S seconds
Training runs use bf16 autocast with fp32 master weights (the usual mixed-precision setting) and foreach
optimizers; inference runs cast the model to bf16. Dropout is on in training, as in the models' configs.
"""

import argparse
import json
import statistics
import sys
import time


def fail(msg):
    print("measure_gpu_models.py: " + msg, file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the JSON lines here (default: standard output)")
    ap.add_argument("--only", default="", help="comma-separated case names to run (default: all)")
    ap.add_argument("--iters", type=int, default=5, help="timed steps; the median is kept (5)")
    ap.add_argument("--power", type=float, default=0, help="also run each step back to back this many seconds "
                                                           "and record the board power (NVML; 0: no)")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        import torchvision
        import transformers
    except ImportError as e:
        fail("needs PyTorch with CUDA, torchvision and transformers (%s)" % e)
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA device")
    from torch.profiler import profile, ProfilerActivity
    dev = torch.device("cuda")
    bf16 = torch.bfloat16
    out = open(args.out, "w") if args.out else sys.stdout
    props = torch.cuda.get_device_properties(dev)
    out.write(json.dumps({"kind": "device", "name": props.name, "sms": props.multi_processor_count,
                          "torch": torch.__version__, "cuda": torch.version.cuda,
                          "transformers": transformers.__version__}) + "\n")
    out.flush()

    def measure(name, fields, step):
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        walls = []
        for _ in range(args.iters):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            walls.append(start.elapsed_time(end) / 1e3)
        sums, counts, per = [], [], {}
        for i in range(3):
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step()
                torch.cuda.synchronize()
            total, n = 0.0, 0
            for e in prof.events():
                if e.device_type != torch.autograd.DeviceType.CUDA:
                    continue
                us = e.time_range.elapsed_us()
                total += us
                n += 1
                if i == 0:
                    c = per.setdefault(e.name[:120], [0, 0.0])
                    c[0] += 1
                    c[1] += us
            sums.append(total / 1e6)
            counts.append(n)
        top = sorted(([k, v[0], round(v[1], 1)] for k, v in per.items()), key=lambda r: -r[2])[:40]
        power = {}
        if args.power > 0:
            power = sample_power(step, args.power)
        row = {"kind": "model", "case": name}
        row.update(fields)
        row.update({"kernel_sec": statistics.median(sums), "wall_sec": statistics.median(walls),
                    "kernels": int(statistics.median(counts)), "top": top})
        row.update(power)
        out.write(json.dumps(row) + "\n")
        out.flush()
        print("%.1f %s: kernels %.3f ms (%d), wall %.3f ms" % (time.time(), name, row["kernel_sec"] * 1e3, row["kernels"],
                                                         row["wall_sec"] * 1e3), file=sys.stderr)

    def sample_power(step, seconds):
        """Mean and peak board power (NVML, sampled every 50 ms from a thread) while step runs back to back."""
        import threading
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        samples, stop = [], threading.Event()

        def sampler():
            while not stop.is_set():
                samples.append(pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0)
                time.sleep(0.05)
        for _ in range(3):  # warm the clocks up before sampling
            step()
        torch.cuda.synchronize()
        t = threading.Thread(target=sampler)
        t.start()
        t0 = time.time()
        while time.time() - t0 < seconds:
            step()
            torch.cuda.synchronize()
        stop.set()
        t.join()
        # The first second is the ramp (clocks and power settle); the mean is over the rest.
        steady = samples[20:] if len(samples) > 40 else samples
        return {"power_w_mean": round(statistics.mean(steady), 1), "power_w_max": round(max(samples), 1),
                "power_seconds": seconds}

    def infer(model, inputs):
        model = model.to(dev, bf16).eval()

        def step():
            with torch.no_grad():
                model(*inputs) if isinstance(inputs, tuple) else model(**inputs)
        return step

    def train(model, batch, loss_of, optimizer):
        model = model.to(dev).train()
        opt = optimizer(model.parameters())

        def step():
            with torch.autocast("cuda", dtype=bf16):
                loss = loss_of(model, batch)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return step

    def resnet_batch(n):
        return torch.randn(n, 3, 224, 224, device=dev), torch.randint(0, 1000, (n,), device=dev)

    def sgd(p):
        return torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=True)

    def adamw(p):
        return torch.optim.AdamW(p, lr=1e-4, foreach=True)

    def ids(b, s, vocab):
        return torch.randint(0, vocab, (b, s), device=dev)

    cases = []

    def case(name, fields, make):
        cases.append((name, fields, make))

    for b in (1, 32):
        case("resnet50_infer_b%d" % b, {"model": "resnet50", "mode": "inference", "batch": b, "dtype": "bfloat16"},
             lambda b=b: infer(torchvision.models.resnet50(), (resnet_batch(b)[0].to(bf16),)))
    case("resnet50_train_b32", {"model": "resnet50", "mode": "training", "batch": 32, "optimizer": "sgd",
                                "dtype": "bf16 autocast"},
         lambda: train(torchvision.models.resnet50(), resnet_batch(32),
                       lambda m, bt: F.cross_entropy(m(bt[0]), bt[1]), sgd))
    bert_base = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
    bert_large = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    for label, cfg, b in (("bert_base", bert_base, 8), ("bert_large", bert_large, 8), ("bert_large", bert_large, 1)):
        case("%s_infer_b%d_s128" % (label, b), {"model": label, "mode": "inference", "batch": b, "seq": 128,
                                                 "dtype": "bfloat16"},
             lambda cfg=cfg, b=b: infer(transformers.BertModel(transformers.BertConfig(**cfg)),
                                        {"input_ids": ids(b, 128, 30522)}))
    case("bert_large_train_b32_s128", {"model": "bert_large", "mode": "training", "batch": 32, "seq": 128,
                                       "head": "masked LM over every token", "optimizer": "adamw",
                                       "dtype": "bf16 autocast"},
         lambda: train(transformers.BertForMaskedLM(transformers.BertConfig(**bert_large)),
                       ids(32, 128, 30522), lambda m, x: m(input_ids=x, labels=x).loss, adamw))
    case("gpt2_infer_b1_s1024", {"model": "gpt2", "mode": "inference", "batch": 1, "seq": 1024,
                                 "dtype": "bfloat16"},
         lambda: infer(transformers.GPT2LMHeadModel(transformers.GPT2Config()), {"input_ids": ids(1, 1024, 50257)}))
    case("gpt2_train_b8_s1024", {"model": "gpt2", "mode": "training", "batch": 8, "seq": 1024,
                                 "optimizer": "adamw", "dtype": "bf16 autocast"},
         lambda: train(transformers.GPT2LMHeadModel(transformers.GPT2Config()), ids(8, 1024, 50257),
                       lambda m, x: m(input_ids=x, labels=x).loss, adamw))
    llama = dict(hidden_size=4096, intermediate_size=11008, num_attention_heads=32, num_key_value_heads=32,
                 num_hidden_layers=1, vocab_size=32000, max_position_embeddings=4096)

    def llama_layer():
        return transformers.LlamaModel(transformers.LlamaConfig(**llama))

    def llama_layer_head():
        return transformers.LlamaForCausalLM(transformers.LlamaConfig(**llama))

    case("llama2_7b_layer_prefill_b1_s2048", {"model": "llama2-7b", "layers": 1, "mode": "prefill", "batch": 1,
                                              "seq": 2048, "dtype": "bfloat16",
                                              "note": "embedding, one decoder layer, final norm"},
         lambda: infer(llama_layer(), {"input_ids": ids(1, 2048, 32000)}))

    def llama_decode(b, make=llama_layer):
        model = make().to(dev, bf16).eval()
        with torch.no_grad():
            cache = model(input_ids=ids(b, 2048, 32000), use_cache=True).past_key_values
        tok = ids(b, 1, 32000)

        def step():
            with torch.no_grad():
                model(input_ids=tok, past_key_values=cache, use_cache=True)
            cache.crop(2048)
        return step

    for b in (1, 16):
        case("llama2_7b_layer_decode_b%d_kv2048" % b, {"model": "llama2-7b", "layers": 1, "mode": "decode",
                                                       "batch": b, "kv": 2048, "dtype": "bfloat16",
                                                       "note": "embedding, one decoder layer, final norm"},
             lambda b=b: llama_decode(b))

    # The same with the LM head (LlamaForCausalLM, logits for every position), as tessel's llama graph has it.
    case("llama2_7b_layer_head_prefill_b1_s2048", {"model": "llama2-7b", "layers": 1, "mode": "prefill", "batch": 1,
                                                   "seq": 2048, "dtype": "bfloat16", "lm_head": True,
                                                   "note": "embedding, one decoder layer, final norm, LM head"},
         lambda: infer(llama_layer_head(), {"input_ids": ids(1, 2048, 32000)}))
    for b in (1, 16):
        case("llama2_7b_layer_head_decode_b%d_kv2048" % b,
             {"model": "llama2-7b", "layers": 1, "mode": "decode", "batch": b, "kv": 2048, "dtype": "bfloat16",
              "lm_head": True, "note": "embedding, one decoder layer, final norm, LM head"},
             lambda b=b: llama_decode(b, llama_layer_head))

    only = set(x for x in args.only.split(",") if x)
    for name, fields, make in cases:
        if only and name not in only:
            continue
        try:
            measure(name, fields, make())
        except Exception as e:  # one model that fails must not lose the others
            print("measure_gpu_models.py: %s failed: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
        torch.cuda.empty_cache()
    if args.out:
        out.close()


if __name__ == "__main__":
    main()
