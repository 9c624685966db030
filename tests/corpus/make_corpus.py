#!/usr/bin/python3
"""Writes the bad-input corpus files (tests/corpus/<area>/*) from the mutations listed here. The files are
committed; run this again after adding a mutation (it rewrites the generated files and keeps none stale).
Each mutation is what a new user might plausibly write, or what a script might produce by mistake.
tests/scripts/corpus_test.py runs them (see its docstring for the header lines)."""

import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

PLATFORM = """platform: corpus_mesh
description: 4x4 mesh of tiles with HBM on the west edge (the teaching mesh, written out)
clock: 1GHz

components:
  tile:
    kind: tile
    replicate: {x: 4, y: 4}
    params:
      pe:
        macs_per_cycle: {fp32: 64, bf16: 256, fp16: 256, int8: 512}
        vector_lanes: 16
        issue_overhead: 4cycles
      sram:
        capacity: 256KiB
        banks: 4
        bank_bandwidth: 32B/cycle
        latency: 2cycles

  noc:
    kind: mesh_noc
    params:
      width: 4
      height: 4
      link_bandwidth: 32B/cycle
      router_latency: 2cycles
      link_latency: 1cycle
      packet_bytes: 256B
      header_bytes: 16B

  hbm:
    kind: hbm
    preset: hbm2e_stack
    params:
      channels: 4
      capacity: 8GiB

  sync:
    kind: barrier
    params:
      latency: 50cycles

connections:
  - tile[x,y] -> noc[x,y]
  - hbm[c] -> noc[0,c]

mapper:
  impl: mesh
"""

WORKLOAD = """workload: corpus_mlp
parameters:
  batch: 64
  width: 1024
  precision: fp16
tensors:
  x:   {shape: [batch, width], role: input}
  w1:  {shape: [width, width], role: weight}
  b1:  {shape: [width], role: weight}
  w2:  {shape: [width, width], role: weight}
ops:
  - {name: fc1,   op: matmul, inputs: [x, w1, b1]}
  - {name: relu1, op: relu,   inputs: [fc1]}
  - {name: y,     op: matmul, inputs: [relu1, w2]}
"""

PROGRAM = """program: corpus_prog
steps:
  - id: a
    transfer: {from: "tile[0,0]", to: "tile[3,0]", bytes: 64KiB}
  - id: b
    transfer: {from: "tile[1,0]", to: "tile[3,0]", bytes: 64KiB}
  - id: c
    compute: {on: "tile[3,0]", vector_ops: 65536, dtype: fp16}
    after: [a, b]
"""

SWEEP = """sweep: corpus_sweep
platform: mesh4x4
workload: gemm
axes:
  noc.link_bandwidth: [16B/cycle, 32B/cycle]
  workload.m: [64, 128]
derived:
  workload.n: workload.m
  workload.k: workload.m
metrics: [sim_time_s, bound_by]
timeout: 20s
"""

written = []

# Inputs the corpus first took for bad ones that tessel rightly accepts (judged when the checks were written, with
# the reason each is meaningful): they are kept and must run.
MEANINGFUL = {
    ("platform", "link_bw_huge"): "0: an ideal network (transfers take no time) is a what-if question; the run is exact",
    ("platform", "macs_huge"): "0: an ideal PE (compute takes no time) is a what-if question; the run is exact",
    ("platform", "packet_one"): "0: 1-byte packets are slow to simulate but well defined, and within the packet budget",
    ("platform", "header_ge_packet"): "0: header_bytes is added to each packet's payload (packet_bytes), so this halves the link efficiency",
    ("program", "expr_index_float"): "0: a finished index is truncated toward zero (docs/platform-yaml.md), so {1/3} is tile 0, "
                                     "as {1 / 3} always was; it failed only while '1/' read as a number with a unit",
    ("program", "after_scalar"): "0: after: a is the one-dependency form of after: [a]",
    ("program", "platform_unknown"): "0: -p names the platform; a program's platform: is only the default when -p is absent",
    ("program", "transfer_same_place"): "0: a copy within one tile (through its SRAM) is a real step",
    ("program", "transfer_zero"): "0: a 0-byte transfer is a pure dependency: it moves nothing and takes no time",
    ("workload", "param_cycle"): "0: batch: width and width2: batch form no cycle (width is 1024), so batch is 1024",
    ("workload", "shape_many_dims"): "0: dimensions of 1 change no count; the element count is checked, not the rank",
}


def out(area, name, text, what, expect=None, error=None, args=None):
    """One corpus file: `what` says what it tries; expect is "0: why" for meaningful inputs."""
    if (area, name) in MEANINGFUL:
        expect, error = MEANINGFUL[(area, name)], None
    head = ["# corpus: " + what]
    if args:
        head.append("# args: " + args)
    if expect:
        head.append("# expect: " + expect)
    if error:
        head.append("# error: " + error)
    d = os.path.join(HERE, area)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name + ".yaml")
    assert path not in written, path
    with open(path, "w") as f:
        f.write("\n".join(head) + "\n" + text)
    written.append(path)


def raw(area, name, data, suffix=".yaml"):
    """A file written byte for byte (no header): binary junk, odd encodings, empty files."""
    d = os.path.join(HERE, area)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name + suffix)
    assert path not in written, path
    with open(path, "wb") as f:
        f.write(data)
    written.append(path)


def sub(base, old, new, count=1):
    assert old in base, old
    return base.replace(old, new, count)


# ---------------------------------------------------------------------------------------------------------
# Platforms: run with `tessel run -q -p FILE -w gemm`.
PLATFORM_MUTATIONS = [
    # (file name, text replaced, replacement, what it tries, text the message must contain)
    ("replicate_4g_x_4g", "replicate: {x: 4, y: 4}", "replicate: {x: 4294967296, y: 4294967296}",
     "replicate product that wraps to 0 in 64 bits (issue 16: hang)", "replicat"),
    ("replicate_huge_x", "replicate: {x: 4, y: 4}", "replicate: {x: 100000000, y: 1}", "replicate 1e8 tiles", "replicat"),
    ("replicate_zero", "replicate: {x: 4, y: 4}", "replicate: {x: 0, y: 4}", "replicate count 0", ""),
    ("replicate_negative", "replicate: {x: 4, y: 4}", "replicate: {x: -4, y: 4}", "replicate count -4", ""),
    ("replicate_fraction", "replicate: {x: 4, y: 4}", "replicate: {x: 2.5, y: 4}", "replicate count 2.5", ""),
    ("replicate_text", "replicate: {x: 4, y: 4}", "replicate: {x: four, y: 4}", "replicate count a word", ""),
    ("replicate_list", "replicate: {x: 4, y: 4}", "replicate: [4, 4]", "replicate as a list", ""),
    ("replicate_1e30", "replicate: {x: 4, y: 4}", "replicate: {x: 1e30, y: 4}", "replicate count 1e30", ""),
    ("replicate_nan", "replicate: {x: 4, y: 4}", "replicate: {x: .nan, y: 4}", "replicate count NaN", ""),
    ("replicate_inf", "replicate: {x: 4, y: 4}", "replicate: {x: .inf, y: 4}", "replicate count infinity", ""),
    ("replicate_empty", "replicate: {x: 4, y: 4}", "replicate: {}", "replicate with no dimension", ""),
    ("replicate_many_dims", "replicate: {x: 4, y: 4}", "replicate: {a: 16, b: 16, c: 16, d: 16, e: 16}",
     "replicate over five dimensions, 1M modules", ""),
    ("clock_zero", "clock: 1GHz", "clock: 0Hz", "a clock of 0 Hz", "clock"),
    ("clock_negative", "clock: 1GHz", "clock: -1GHz", "a negative clock", "clock"),
    ("clock_1e30", "clock: 1GHz", "clock: 1e30Hz", "an absurd clock (issue 16: 8e15 EFLOP/s)", "clock"),
    ("clock_tiny", "clock: 1GHz", "clock: 1e-30Hz", "a clock so slow one cycle is beyond simulated time", ""),
    ("clock_nan", "clock: 1GHz", "clock: nanHz", "a NaN clock", ""),
    ("clock_inf", "clock: 1GHz", "clock: infGHz", "an infinite clock", ""),
    ("clock_unitless", "clock: 1GHz", "clock: 1000000000", "a clock without a unit", ""),
    ("clock_wrong_unit", "clock: 1GHz", "clock: 1GB", "a clock in bytes", ""),
    ("clock_word", "clock: 1GHz", "clock: fast", "a clock that is a word", ""),
    ("clock_empty", "clock: 1GHz", "clock:", "an empty clock", ""),
    ("clock_list", "clock: 1GHz", "clock: [1GHz]", "a clock as a list", ""),
    ("quantum_negative", "clock: 1GHz", "clock: 1GHz\nquantum: -5ns", "a negative quantum (issue 16)", "quantum"),
    ("unknown_top_key", "mapper:\n", "mappr:\n", "a misspelt top-level key", "mappr"),
    ("unknown_kind", "kind: mesh_noc", "kind: mesh_nco", "an unknown component kind", "mesh_nco"),
    ("unknown_preset", "preset: hbm2e_stack", "preset: hbm9_stack", "an unknown preset", "hbm9_stack"),
    ("unknown_param", "link_bandwidth: 32B/cycle", "link_bandwith: 32B/cycle", "a misspelt parameter", "link_bandwith"),
    ("unknown_mapper", "impl: mesh", "impl: mesj", "an unknown mapper", "mesj"),
    ("mapper_none", "mapper:\n  impl: mesh\n", "", "no mapper for a workload run", ""),
    ("kind_missing", "    kind: barrier\n", "", "a component without kind", ""),
    ("link_bw_zero", "link_bandwidth: 32B/cycle", "link_bandwidth: 0B/cycle", "a link bandwidth of 0", "link_bandwidth"),
    ("link_bw_negative", "link_bandwidth: 32B/cycle", "link_bandwidth: -32B/cycle", "a negative link bandwidth", ""),
    ("link_bw_tiny", "link_bandwidth: 32B/cycle", "link_bandwidth: 1e-12B/cycle",
     "a link so slow that simulated time saturates (issue 16: internal error)", ""),
    ("link_bw_wrong_unit", "link_bandwidth: 32B/cycle", "link_bandwidth: 32GHz", "a bandwidth in hertz", ""),
    ("link_bw_huge", "link_bandwidth: 32B/cycle", "link_bandwidth: 1e300B/s", "an absurd link bandwidth", ""),
    ("packet_zero", "packet_bytes: 256B", "packet_bytes: 0B", "a packet of 0 bytes", "packet_bytes"),
    ("packet_one", "packet_bytes: 256B\n      header_bytes: 16B", "packet_bytes: 1B\n      header_bytes: 0B",
     "1-byte packets: a GEMM becomes millions of packets", ""),
    ("header_ge_packet", "header_bytes: 16B", "header_bytes: 256B", "a header as big as the packet", ""),
    ("header_huge", "header_bytes: 16B", "header_bytes: 1PB", "a header of a petabyte", ""),
    ("packet_huge", "packet_bytes: 256B", "packet_bytes: 1e30B", "a packet of 1e30 bytes", ""),
    ("noc_width_zero", "width: 4\n", "width: 0\n", "a mesh of width 0", ""),
    ("noc_width_huge", "width: 4\n      height: 4", "width: 100000\n      height: 100000", "a 1e10-router mesh", ""),
    ("noc_width_mismatch", "width: 4\n", "width: 3\n", "a mesh narrower than the tile grid", ""),
    ("noc_width_negative", "width: 4\n", "width: -4\n", "a mesh of negative width", ""),
    ("router_latency_negative", "router_latency: 2cycles", "router_latency: -2cycles", "a negative latency", ""),
    ("router_latency_huge", "router_latency: 2cycles", "router_latency: 1e30cycles", "a latency beyond simulated time", ""),
    ("max_outstanding_4g", "header_bytes: 16B", "header_bytes: 16B\n      max_outstanding: 4294967296",
     "max_outstanding 2^32 (issue 16: SIGFPE)", "max_outstanding"),
    ("max_outstanding_zero", "header_bytes: 16B", "header_bytes: 16B\n      max_outstanding: 0", "max_outstanding 0", ""),
    ("max_outstanding_negative", "header_bytes: 16B", "header_bytes: 16B\n      max_outstanding: -1", "max_outstanding -1", ""),
    ("sram_capacity_4B", "capacity: 256KiB", "capacity: 4B", "a 4-byte scratchpad (issue 16: mapper loops)", ""),
    ("sram_capacity_64B", "capacity: 256KiB", "capacity: 64B", "a 64-byte scratchpad (issue 16: 12 GB)", ""),
    ("sram_capacity_zero", "capacity: 256KiB", "capacity: 0B", "a scratchpad of 0 bytes", ""),
    ("sram_capacity_fraction", "capacity: 256KiB", "capacity: 0.5B", "half a byte", ""),
    ("sram_banks_zero", "banks: 4", "banks: 0", "0 SRAM banks", ""),
    ("sram_banks_huge", "banks: 4", "banks: 100000000", "1e8 SRAM banks per tile", ""),
    ("sram_bank_bw_zero", "bank_bandwidth: 32B/cycle", "bank_bandwidth: 0B/cycle", "SRAM banks with no bandwidth", ""),
    ("macs_zero", "macs_per_cycle: {fp32: 64, bf16: 256, fp16: 256, int8: 512}",
     "macs_per_cycle: {fp32: 0, bf16: 0, fp16: 0, int8: 0}", "a PE with no MACs", ""),
    ("macs_negative", "fp16: 256, int8", "fp16: -256, int8", "a negative MAC count", ""),
    ("macs_unknown_dtype", "fp16: 256, int8", "fp17: 256, int8", "a MAC count for an unknown dtype", "fp17"),
    ("macs_huge", "fp16: 256, int8", "fp16: 1e300, int8", "1e300 MACs per cycle", ""),
    ("vector_lanes_zero", "vector_lanes: 16", "vector_lanes: 0", "a PE with no vector lanes", ""),
    ("hbm_channels_1e8", "channels: 4\n", "channels: 100000000\n", "1e8 HBM channels (issue 16: runaway memory)", "channels"),
    ("hbm_channels_zero", "channels: 4", "channels: 0", "an HBM with no channels", ""),
    ("hbm_channels_negative", "channels: 4", "channels: -4", "negative HBM channels", ""),
    ("hbm_capacity_zero", "capacity: 8GiB", "capacity: 0B", "an HBM of 0 bytes", ""),
    ("hbm_capacity_huge", "capacity: 8GiB", "capacity: 1e30B", "an HBM of 1e30 bytes", ""),
    ("barrier_latency_negative", "latency: 50cycles", "latency: -50cycles", "a negative barrier latency", ""),
    ("connection_unknown", "tile[x,y] -> noc[x,y]", "tile[x,y] -> nocc[x,y]", "a connection to an unknown component", "nocc"),
    ("connection_out_of_range", "hbm[c] -> noc[0,c]", "hbm[c] -> noc[9,c]", "a router beyond the mesh", ""),
    ("connection_negative_index", "hbm[c] -> noc[0,c]", "hbm[c] -> noc[-1,c]", "a negative router index", ""),
    ("connection_no_arrow", "tile[x,y] -> noc[x,y]", "tile[x,y] noc[x,y]", "a connection without an arrow", ""),
    ("connection_unbound_var", "hbm[c] -> noc[0,c]", "hbm[c] -> noc[0,d]", "an index variable never bound", ""),
    ("connection_expr_div0", "hbm[c] -> noc[0,c]", "hbm[c] -> noc[0,c/0]", "an index divided by zero", ""),
    ("connection_twice", "  - hbm[c] -> noc[0,c]\n", "  - hbm[c] -> noc[0,c]\n  - hbm[c] -> noc[0,c]\n",
     "the same connection twice", ""),
    ("connection_self", "  - hbm[c] -> noc[0,c]\n", "  - hbm[c] -> noc[0,c]\n  - noc -> noc\n", "a network on itself", ""),
    ("connection_huge_index", "hbm[c] -> noc[0,c]", "hbm[c] -> noc[0,99999999999999999999]", "a 20-digit index", ""),
    ("connections_map", "connections:\n  - tile[x,y] -> noc[x,y]\n  - hbm[c] -> noc[0,c]\n",
     "connections: {tile: noc}\n", "connections as a map", ""),
    ("components_list", "components:\n", "components: []\nother:\n", "components as an empty list", ""),
    ("unclosed_quote", "description: 4x4", "description: \"4x4", "an unclosed quote swallows the file (issue 16)", ""),
    ("unclosed_quote_preset", "preset: hbm2e_stack", "preset: \"hbm2e_stack", "an unclosed quote in a preset name (issue 16)", ""),
    ("unclosed_bracket", "replicate: {x: 4, y: 4}", "replicate: {x: 4, y: 4", "an unclosed brace", ""),
    ("tab_indent", "    kind: tile\n", "\tkind: tile\n", "a tab used for indentation", ""),
    ("bad_indent", "    params:\n      width: 4", "    params:\n    width: 4", "a parameter indented as a sibling", ""),
    ("duplicate_component", "  sync:\n", "  hbm:\n", "a component defined twice (duplicate key)", "hbm"),
    ("duplicate_param", "banks: 4\n", "banks: 4\n        banks: 8\n", "a parameter given twice", "banks"),
    ("params_list", "    params:\n      latency: 50cycles", "    params: [latency, 50cycles]", "params as a list", ""),
    ("anchor_alias_bomb", "description: 4x4", "x: &a [1,1,1,1,1,1,1,1,1]\ny: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
     "z: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nw: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ndescription: 4x4", "YAML aliases (a billion laughs)", ""),
    ("parameters_div0", "clock: 1GHz", "parameters: {k: \"${1/0}\"}\nclock: 1GHz", "a parameter of ${1/0} (issue 16: unknown unit '/')",
     "parameters_div0.yaml:5:17: in '${1/0}': division by zero"),
    ("parameters_cycle", "clock: 1GHz", "parameters: {a: \"${b}\", b: \"${a}\"}\nclock: 1GHz", "parameters defined by each other", ""),
    ("parameters_unknown", "clock: 1GHz", "parameters: {a: \"${nothing + 1}\"}\nclock: 1GHz", "a parameter reading an unknown name", ""),
    ("tile_array_1e10", "  sync:\n", "  arr:\n    kind: tile_array\n    params: {width: 100000, height: 100000}\n  sync:\n",
     "a tile_array of 1e10 tiles (issue 16: bad_alloc)", ""),
]


def platforms():
    for name, old, new, what, err in PLATFORM_MUTATIONS:
        out("platform", name, sub(PLATFORM, old, new), what, error=err or None)
    out("platform", "valid_teaching_mesh", PLATFORM, "the unmodified platform", expect="0: the base of every mutation; it runs")
    out("platform", "only_name", "platform: x\n", "a platform with nothing in it")
    out("platform", "scalar_root", "just a sentence\n", "a file that is one scalar")
    out("platform", "list_root", "- a\n- b\n", "a file that is a list")
    out("platform", "comments_only", "# nothing here\n", "a file with only comments")
    out("platform", "null_components", "platform: x\ncomponents: ~\nconnections: ~\n", "null components")
    out("platform", "workload_as_platform", open(os.path.join(ROOT, "workloads/mlp.yaml")).read(), "a workload given as the platform")
    out("platform", "program_as_platform", PROGRAM, "a program given as the platform")
    out("platform", "sweep_as_platform", SWEEP, "a sweep given as the platform")
    raw("platform", "empty", b"")
    raw("platform", "binary_junk", bytes(range(256)) * 4)
    # YAML allows UTF-16 with a byte-order mark and yaml-cpp reads it: a meaningful input (cases.txt runs it).
    raw("yaml_ok", "utf16_platform", PLATFORM.encode("utf-16"))
    raw("platform", "nul_in_text", PLATFORM.encode().replace(b"tile", b"ti\0le", 1))
    raw("platform", "truncated", PLATFORM.encode()[: len(PLATFORM) // 2])
    raw("platform", "deep_nesting", b"a: " + b"[" * 20000 + b"]" * 20000 + b"\n")
    raw("platform", "long_line", b"platform: " + b"x" * 2000000 + b"\n")


# ---------------------------------------------------------------------------------------------------------
# Workloads: run with `tessel run -q -p mesh4x4 -w FILE`.
WORKLOAD_MUTATIONS = [
    ("batch_zero", "batch: 64", "batch: 0", "a batch of 0 (issue 16: simulates 0 s)", "batch"),
    ("batch_negative", "batch: 64", "batch: -64", "a negative batch", ""),
    ("batch_1e30", "batch: 64", "batch: 1e30", "batch 1e30 (issue 16: says 'expected a whole number')", ""),
    ("batch_fraction", "batch: 64", "batch: 6.5", "a fractional batch", ""),
    ("batch_nan", "batch: 64", "batch: .nan", "a NaN batch", ""),
    ("batch_word", "batch: 64", "batch: many", "a batch that is a word", ""),
    ("batch_div0", "batch: 64", "batch: \"${1/0}\"", "a batch of ${1/0} (issue 16: unknown unit '/')", ""),
    ("batch_expr_div0", "batch: 64", "batch: 64 / 0", "a batch of 64 / 0", ""),
    ("width_2p32", "width: 1024", "width: 4294967296", "width 2^32: 2^64-element weights overflow", ""),
    ("width_2p31", "width: 1024", "width: 2147483648", "width 2^31: 2^62-element weights (exabytes)", ""),
    ("width_2p21", "width: 1024", "width: 2097152", "width 2^21: terabyte weights on a 4x4 mesh", ""),
    ("shape_zero", "x:   {shape: [batch, width]", "x:   {shape: [0, width]", "a tensor with a zero dimension", ""),
    ("shape_negative", "x:   {shape: [batch, width]", "x:   {shape: [-1, width]", "a tensor with a negative dimension", ""),
    ("shape_empty", "x:   {shape: [batch, width]", "x:   {shape: []", "a scalar input to a matmul", ""),
    ("shape_scalar", "x:   {shape: [batch, width]", "x:   {shape: 5", "a shape that is not a list", ""),
    ("shape_product_overflow", "x:   {shape: [batch, width]",
     "x:   {shape: [65536, 65536, 65536, 65536, 65536, batch, width]", "a shape whose product overflows 64 bits", ""),
    ("shape_many_dims", "x:   {shape: [batch, width]", "x:   {shape: [" + ", ".join(["1"] * 200) + ", batch, width]",
     "a 202-dimensional tensor", ""),
    ("shape_mismatch", "w1:  {shape: [width, width]", "w1:  {shape: [width, 7]", "matmul inner dimensions that disagree", ""),
    ("shape_unknown_param", "x:   {shape: [batch, width]", "x:   {shape: [btach, width]", "a misspelt parameter in a shape", "btach"),
    ("shape_string", "x:   {shape: [batch, width]", "x:   {shape: [\"64KiB\", width]", "a size with a unit as a dimension", ""),
    ("ops_empty", "ops:\n  - {name: fc1,   op: matmul, inputs: [x, w1, b1]}\n  - {name: relu1, op: relu,   inputs: [fc1]}\n"
     "  - {name: y,     op: matmul, inputs: [relu1, w2]}\n", "ops: []\n", "a workload with no ops (issue 16: simulates 0 s)", ""),
    ("ops_missing", "ops:\n  - {name: fc1,   op: matmul, inputs: [x, w1, b1]}\n  - {name: relu1, op: relu,   inputs: [fc1]}\n"
     "  - {name: y,     op: matmul, inputs: [relu1, w2]}\n", "", "a workload with tensors and no ops", ""),
    ("ops_map", "ops:\n  - {name: fc1,   op: matmul, inputs: [x, w1, b1]}\n", "ops:\n  fc1: {op: matmul, inputs: [x, w1, b1]}\n",
     "ops as a map", ""),
    ("unknown_op", "op: relu,", "op: rleu,", "a misspelt op type", "rleu"),
    ("unknown_input", "inputs: [relu1, w2]", "inputs: [relu2, w2]", "an op reading a tensor nobody made", "relu2"),
    ("too_many_inputs", "inputs: [fc1]}", "inputs: [fc1, fc1, fc1, fc1]}", "relu with four inputs", ""),
    ("no_inputs", "inputs: [fc1]}", "inputs: []}", "relu with no input", ""),
    ("self_loop", "inputs: [fc1]}", "inputs: [relu1]}", "an op reading its own result", ""),
    ("cycle_two", "{name: fc1,   op: matmul, inputs: [x, w1, b1]}", "{name: fc1,   op: matmul, inputs: [relu1, w1, b1]}",
     "a two-op cycle (issue 16: wrong path printed)", "fc1"),
    ("duplicate_op_name", "{name: y,     op: matmul", "{name: fc1,   op: matmul", "two ops with the same name", "fc1"),
    ("op_name_is_tensor", "{name: y,     op: matmul", "{name: w2,    op: matmul", "an op named like an input tensor", ""),
    ("unknown_role", "role: weight}\n  b1", "role: wieght}\n  b1", "a misspelt role", "wieght"),
    ("unknown_dtype", "x:   {shape: [batch, width], role: input}", "x:   {shape: [batch, width], role: input, dtype: fp17}",
     "an unknown dtype", "fp17"),
    ("unknown_precision", "precision: fp16", "precision: fp17", "an unknown precision", "fp17"),
    ("unknown_attribute", "op: relu,   inputs: [fc1]}", "op: relu,   inputs: [fc1], slope: 2}", "an attribute relu does not have", "slope"),
    ("transpose_word", "inputs: [relu1, w2]}", "inputs: [relu1, w2], transpose_b: maybe}", "a boolean attribute 'maybe'", ""),
    ("training_unknown", "precision: fp16", "precision: fp16\n  training: yes_please", "an unknown training mode", ""),
    ("fuse_word", "precision: fp16", "precision: fp16\n  fuse: perhaps", "fuse: perhaps", ""),
    ("param_cycle", "batch: 64", "batch: width\n  width2: batch", "parameters that refer to each other", ""),
    ("param_self", "batch: 64", "batch: batch * 2", "a parameter defined by itself", ""),
    ("param_pow_overflow", "batch: 64", "batch: 2 ** 2000", "a parameter of 2 ** 2000", ""),
    ("unclosed_quote", "workload: corpus_mlp", "workload: \"corpus_mlp", "an unclosed quote swallowing the file (issue 16)", ""),
    ("duplicate_key", "  width: 1024\n", "  width: 1024\n  width: 2048\n", "a parameter given twice", "width"),
    ("duplicate_tensor", "  w2:  {shape: [width, width], role: weight}\n",
     "  w2:  {shape: [width, width], role: weight}\n  w2:  {shape: [width], role: weight}\n", "a tensor declared twice", "w2"),
    ("outputs_unknown", "ops:\n", "outputs: [nothing]\nops:\n", "an output nobody makes", "nothing"),
    ("unknown_top_key", "tensors:", "tensorz:", "a misspelt top-level key", "tensorz"),
    ("generator_unknown", "tensors:", "generator: resnte\ntensors:", "an unknown generator", ""),
    ("conv_kernel_bigger", "ops:\n", "ops:\n  - {name: cv, op: conv2d, inputs: [img, k]}\n", "conv with a kernel larger than the image", ""),
    ("conv_stride_zero", "ops:\n", "ops:\n  - {name: cv, op: conv2d, inputs: [img, k2], stride: 0}\n", "conv with stride 0", ""),
    ("conv_groups_bad", "ops:\n", "ops:\n  - {name: cv, op: conv2d, inputs: [img, k2], groups: 5}\n", "conv with groups not dividing channels", ""),
    ("conv_padding_negative", "ops:\n", "ops:\n  - {name: cv, op: conv2d, inputs: [img, k2], padding: -5}\n", "conv with negative padding", ""),
    ("conv_dilation_huge", "ops:\n", "ops:\n  - {name: cv, op: conv2d, inputs: [img, k2], dilation: 1000000}\n", "conv with dilation 1e6", ""),
    ("pool_kernel_zero", "ops:\n", "ops:\n  - {name: pl, op: max_pool, inputs: [img], kernel: 0}\n", "pooling with kernel 0", ""),
    ("softmax_axis_out", "ops:\n", "ops:\n  - {name: sm, op: softmax, inputs: [x], axis: 7}\n", "softmax over axis 7 of a 2-D tensor", ""),
    ("reshape_bad", "ops:\n", "ops:\n  - {name: rs, op: reshape, inputs: [x], shape: [3, 5]}\n", "reshape to a different element count", ""),
    ("reshape_huge", "ops:\n", "ops:\n  - {name: rs, op: reshape, inputs: [x], shape: [-1, 0, 4294967296]}\n", "reshape with 0 and 2^32", ""),
    ("split_zero", "ops:\n", "ops:\n  - {name: sp, op: split, inputs: [x], outputs: [], axis: 0}\n", "split into nothing", ""),
    ("concat_mismatch", "ops:\n", "ops:\n  - {name: cc, op: concat, inputs: [x, w1, b1], axis: 0}\n", "concat of shapes that disagree", ""),
    ("transpose_perm_bad", "ops:\n", "ops:\n  - {name: tp, op: transpose, inputs: [x], perm: [0, 0]}\n", "a permutation repeating an axis", ""),
    ("slice_step_zero", "ops:\n", "ops:\n  - {name: sl, op: slice, inputs: [x], starts: [0], ends: [4], axes: [0], steps: [0]}\n", "slice with step 0", ""),
    ("gather_axis_bad", "ops:\n", "ops:\n  - {name: gt, op: gather, inputs: [x, x], axis: -9}\n", "gather on axis -9", ""),
    ("expand_huge", "ops:\n", "ops:\n  - {name: ex, op: expand, inputs: [b1], shape: [4294967296, 4294967296, 1024]}\n", "expand to 2^74 elements", ""),
]
CONV_TENSORS = "  img: {shape: [1, 4, 8, 8], role: input}\n  k:   {shape: [4, 4, 16, 16], role: weight}\n  k2:  {shape: [4, 4, 3, 3], role: weight}\n"


def workloads():
    for name, old, new, what, err in WORKLOAD_MUTATIONS:
        text = sub(WORKLOAD, old, new)
        if "img" in new:
            text = sub(text, "tensors:\n", "tensors:\n" + CONV_TENSORS)
        out("workload", name, text, what, error=err or None)
    out("workload", "valid_mlp", WORKLOAD, "the unmodified workload", expect="0: the base of every mutation; it runs")
    out("workload", "platform_as_workload", PLATFORM, "a platform given as the workload")
    out("workload", "program_as_workload", PROGRAM, "a program given as the workload")
    out("workload", "only_name", "workload: x\n", "a workload with nothing in it")
    out("workload", "list_root", "- a\n- b\n", "a file that is a list")
    out("workload", "gemm_2p32", "workload: g\nparameters: {m: 4294967296, n: 4294967296, k: 4294967296}\n"
        "tensors:\n  a: {shape: [m, k], role: input}\n  b: {shape: [k, n], role: weight}\nops:\n  - {name: c, op: matmul, inputs: [a, b]}\n",
        "a GEMM with m = n = k = 2^32 (issue 16: runaway memory, 0 bytes reported)")
    out("workload", "gemm_1x1x1", "workload: g\nparameters: {m: 1, n: 1, k: 1}\n"
        "tensors:\n  a: {shape: [m, k], role: input}\n  b: {shape: [k, n], role: weight}\nops:\n  - {name: c, op: matmul, inputs: [a, b]}\n",
        "a 1x1x1 GEMM", expect="0: a single multiply-add is a valid (tiny) workload")
    out("workload", "relu_only", "workload: r\ntensors:\n  x: {shape: [1], role: input}\nops:\n  - {name: y, op: relu, inputs: [x]}\n",
        "a one-element relu", expect="0: the smallest elementwise workload is meaningful")
    out("workload", "generator_resnet_batch0", "workload: r\ngenerator: resnet\nparameters: {batch: 0}\n", "a generator with batch 0")
    out("workload", "generator_bert_seq_huge", "workload: b\ngenerator: bert\nparameters: {seq: 4294967296}\n", "bert with seq 2^32")
    out("workload", "generator_llama_layers_huge", "workload: l\ngenerator: llama\nparameters: {layers: 100000000}\n",
        "llama with 1e8 layers (a huge graph)")
    out("workload", "generator_resnet_depth_bad", "workload: r\ngenerator: resnet\nparameters: {depth: 7}\n", "resnet-7")
    out("workload", "generator_with_ops", "workload: r\ngenerator: resnet\nops: []\n", "a generator and ops at once")
    ops = "".join("  - {name: r%d, op: relu, inputs: [r%d]}\n" % (i, i - 1) for i in range(1, 3000))
    out("workload", "long_chain", "workload: chain\ntensors:\n  r0: {shape: [64, 64], role: input}\nops:\n" + ops,
        "a chain of 3000 relus", expect="0: a long graph is meaningful; it maps and runs")
    cyc = "".join("  - {name: c%d, op: relu, inputs: [c%d]}\n" % (i, (i + 1) % 50) for i in range(50))
    out("workload", "cycle_fifty", "workload: cyc\ntensors:\n  x: {shape: [4], role: input}\nops:\n" + cyc,
        "a 50-op cycle: the message must name it correctly", error="cycle")
    out("workload", "cycle_three", "workload: cyc\ntensors:\n  x: {shape: [4], role: input}\nops:\n"
        "  - {name: a, op: add, inputs: [x, c]}\n  - {name: b, op: relu, inputs: [a]}\n  - {name: c, op: relu, inputs: [b]}\n",
        "a three-op cycle (issue 16: wrong path printed)", error="a -> b -> c -> a")
    out("workload", "cycle_two_named", "workload: cyc\ntensors:\n  x: {shape: [4], role: input}\nops:\n"
        "  - {name: a, op: add, inputs: [x, b]}\n  - {name: b, op: relu, inputs: [a]}\n",
        "a two-op cycle (issue 16: 'b -> a -> a')", error="a -> b -> a")
    raw("workload", "empty", b"")
    raw("workload", "binary_junk", bytes((i * 37) % 256 for i in range(2048)))
    raw("workload", "truncated", WORKLOAD.encode()[: len(WORKLOAD) * 2 // 3])


# ---------------------------------------------------------------------------------------------------------
# Programs: run with `tessel run -q -p mesh4x4 -g FILE`.
PROGRAM_MUTATIONS = [
    ("transfer_from_pe", 'from: "tile[0,0]"', 'from: "tile[3,0].pe"', "a transfer from a processing element (issue 16: SIGSEGV)", "pe"),
    ("transfer_to_pe", 'to: "tile[3,0]", bytes: 64KiB}\n  - id: b', 'to: "tile[3,0].pe", bytes: 64KiB}\n  - id: b',
     "a transfer to a processing element (issue 16: SIGSEGV)", "pe"),
    ("transfer_to_noc", 'to: "tile[3,0]", bytes: 64KiB}\n  - id: b', 'to: "noc", bytes: 64KiB}\n  - id: b', "a transfer into a network", ""),
    ("transfer_to_barrier", 'to: "tile[3,0]", bytes: 64KiB}\n  - id: b', 'to: "sync", bytes: 64KiB}\n  - id: b', "a transfer into a barrier", ""),
    ("transfer_1e15", "bytes: 64KiB}\n  - id: b", "bytes: 1e15}\n  - id: b",
     "a 1e15-byte transfer (issue 16: 5 h of simulated time, not checked up front)", "bytes"),
    ("transfer_1PB", "bytes: 64KiB}\n  - id: b", "bytes: 1PB}\n  - id: b", "a petabyte transfer", ""),
    ("transfer_1e30", "bytes: 64KiB}\n  - id: b", "bytes: 1e30B}\n  - id: b", "a transfer of 1e30 bytes", ""),
    ("transfer_negative", "bytes: 64KiB}\n  - id: b", "bytes: -64KiB}\n  - id: b", "a negative transfer", ""),
    ("transfer_zero", "bytes: 64KiB}\n  - id: b", "bytes: 0B}\n  - id: b", "a transfer of 0 bytes", ""),
    ("transfer_fraction", "bytes: 64KiB}\n  - id: b", "bytes: 0.5B}\n  - id: b", "half a byte", ""),
    ("transfer_nan", "bytes: 64KiB}\n  - id: b", "bytes: .nan}\n  - id: b", "NaN bytes", ""),
    ("transfer_bandwidth_unit", "bytes: 64KiB}\n  - id: b", "bytes: 64KiB/s}\n  - id: b", "bytes given as a bandwidth", ""),
    ("transfer_same_place", 'from: "tile[0,0]"', 'from: "tile[3,0]"', "a transfer from a tile to itself", ""),
    ("transfer_no_bytes", ", bytes: 64KiB}\n  - id: b", "}\n  - id: b", "a transfer without bytes", "bytes"),
    ("transfer_out_of_range", 'from: "tile[0,0]"', 'from: "tile[9,0]"', "a tile outside the grid", "tile[9,0]"),
    ("transfer_negative_index", 'from: "tile[0,0]"', 'from: "tile[-1,0]"', "a negative tile index", ""),
    ("transfer_huge_index", 'from: "tile[0,0]"', 'from: "tile[99999999999999999999,0]"', "a 20-digit tile index", ""),
    ("transfer_one_index", 'from: "tile[0,0]"', 'from: "tile[0]"', "one index on a 2-D grid", ""),
    ("transfer_unknown", 'from: "tile[0,0]"', 'from: "tiel[0,0]"', "a misspelt component", "tiel"),
    ("transfer_unclosed_index", 'from: "tile[0,0]"', 'from: "tile[0,0"', "an unclosed index", ""),
    ("transfer_address_huge", 'from: "tile[0,0]"', 'from: "tile[0,0]", from_address: 1e30', "a source address of 1e30", ""),
    ("transfer_address_negative", 'from: "tile[0,0]"', 'from: "tile[0,0]", from_address: -1', "a negative source address", ""),
    ("transfer_hbm_channel_out", 'from: "tile[0,0]"', 'from: "hbm[99]"', "an HBM channel that does not exist", ""),
    ("compute_on_hbm", 'on: "tile[3,0]"', 'on: "hbm"', "compute on an HBM (issue 16: runs)", "hbm"),
    ("compute_on_noc", 'on: "tile[3,0]"', 'on: "noc"', "compute on a network (issue 16: runs)", "noc"),
    ("compute_on_sram", 'on: "tile[3,0]"', 'on: "tile[3,0].sram"', "compute on a scratchpad", ""),
    ("compute_on_barrier", 'on: "tile[3,0]"', 'on: "sync"', "compute on a barrier", ""),
    ("compute_nothing", "compute: {on: \"tile[3,0]\", vector_ops: 65536, dtype: fp16}", "compute: {on: \"tile[3,0]\"}", "compute with no work", ""),
    ("compute_macs_negative", "vector_ops: 65536", "macs: -5", "negative MACs", ""),
    ("compute_macs_1e30", "vector_ops: 65536", "macs: 1e30", "1e30 MACs (beyond simulated time)", ""),
    ("compute_macs_nan", "vector_ops: 65536", "macs: .nan", "NaN MACs", ""),
    ("compute_gemm_2p32", "vector_ops: 65536", "gemm: [4294967296, 4294967296, 4294967296]", "a GEMM of 2^96 MACs", ""),
    ("compute_gemm_zero", "vector_ops: 65536", "gemm: [0, 64, 64]", "a GEMM with m = 0", ""),
    ("compute_gemm_negative", "vector_ops: 65536", "gemm: [-64, 64, 64]", "a GEMM with m = -64", ""),
    ("compute_gemm_two", "vector_ops: 65536", "gemm: [64, 64]", "a GEMM with two dimensions", ""),
    ("compute_gemm_word", "vector_ops: 65536", "gemm: [a, b, c]", "a GEMM of words", ""),
    ("compute_dtype_unknown", "dtype: fp16", "dtype: fp17", "an unknown dtype", "fp17"),
    ("compute_bytes_huge", "dtype: fp16}", "dtype: fp16, bytes: 1e18}", "compute streaming 1e18 operand bytes", ""),
    ("compute_and_transfer", "    compute: {on:", "    transfer: {from: \"tile[0,0]\", to: \"tile[1,0]\", bytes: 1KiB}\n    compute: {on:",
     "a step that is both a transfer and a compute", ""),
    ("step_no_kind", "    compute: {on: \"tile[3,0]\", vector_ops: 65536, dtype: fp16}\n", "", "a step with no kind", ""),
    ("after_unknown", "after: [a, b]", "after: [a, z]", "a dependency on an unknown step", "z"),
    ("after_self", "after: [a, b]", "after: [a, c]", "a step waiting for itself",
     "after_self.yaml:9:5: program 'corpus_prog' can never finish: step 2 'c' waits for itself"),
    ("after_cycle", "    transfer: {from: \"tile[0,0]\", to: \"tile[3,0]\", bytes: 64KiB}\n  - id: b",
     "    transfer: {from: \"tile[0,0]\", to: \"tile[3,0]\", bytes: 64KiB}\n    after: [c]\n  - id: b", "a dependency cycle a -> c -> a",
     "after_cycle.yaml:5:5: program 'corpus_prog' can never finish: its steps wait on each other in a cycle: step 0 'a' -> "
     "step 2 'c' -> step 0 'a' (2 steps are blocked)"),
    ("after_glob_none", "after: [a, b]", "after: [\"zz*\"]", "a glob matching no step", ""),
    ("after_scalar", "after: [a, b]", "after: a", "after as a scalar", ""),
    ("duplicate_id", "  - id: b\n", "  - id: a\n", "two steps with the same id", ""),
    ("delay_negative", "  - id: c\n", "  - id: d\n    delay: -1us\n  - id: c\n", "a negative delay (issue 16: ignored)", "delay"),
    ("delay_huge", "  - id: c\n", "  - id: d\n    delay: 100h\n  - id: c\n", "a delay of 100 hours", ""),
    ("delay_no_unit", "  - id: c\n", "  - id: d\n    delay: 5\n  - id: c\n", "a delay without a unit", ""),
    ("delay_word", "  - id: c\n", "  - id: d\n    delay: soon\n  - id: c\n", "a delay that is a word", ""),
    ("delay_cycles_huge", "  - id: c\n", "  - id: d\n    delay: 1e30cycles\n  - id: c\n", "a delay of 1e30 cycles", ""),
    ("start_negative", "  - id: b\n", "  - id: b\n    start: -5ns\n", "a step starting before time 0", ""),
    ("start_huge", "  - id: b\n", "  - id: b\n    start: 10h\n", "a step starting after 10 hours", ""),
    ("sync_on_tile", "  - id: c\n", "  - id: s\n    sync: {on: \"tile[0,0]\"}\n  - id: c\n", "a sync on a tile", ""),
    ("sync_unknown", "  - id: c\n", "  - id: s\n    sync: {on: \"barier\"}\n  - id: c\n", "a sync on a misspelt barrier", ""),
    ("for_huge", "  - id: c\n", "  - for: {i: 0..100000000000}\n    id: \"d{i}\"\n    delay: 1ns\n  - id: c\n", "a loop of 1e11 steps", ""),
    ("for_product_huge", "  - id: c\n", "  - for: {i: 0..9999999, j: 0..9999999}\n    id: \"d{i}_{j}\"\n    delay: 1ns\n  - id: c\n",
     "two loops whose product is 1e14 steps", ""),
    ("for_reversed", "  - id: c\n", "  - for: {i: 5..0}\n    id: \"d{i}\"\n    delay: 1ns\n  - id: c\n", "a range from 5 down to 0", ""),
    ("for_div0", "  - id: c\n", "  - for: {i: 0..3}\n    id: \"d{i}\"\n    delay: \"{1/0}ns\"\n  - id: c\n", "{1/0} in a loop body", "in '{1/0}': division by zero"),
    ("for_unknown_var", "  - id: c\n", "  - for: {i: 0..3}\n    id: \"d{j}\"\n    delay: 1ns\n  - id: c\n", "an unbound loop variable", ""),
    ("for_same_ids", "  - id: c\n", "  - for: {i: 0..3}\n    id: \"d\"\n    delay: 1ns\n  - id: c\n", "a loop giving every step the same id", ""),
    ("for_unclosed_brace", "  - id: c\n", "  - for: {i: 0..3}\n    id: \"d{i\"\n    delay: 1ns\n  - id: c\n", "an unclosed brace", ""),
    ("expr_pow_huge", "bytes: 64KiB}\n  - id: b", "bytes: \"{2 ** 4000}\"}\n  - id: b", "bytes of 2 ** 4000", ""),
    ("expr_index_float", 'from: "tile[0,0]"', 'from: "tile[{1/3},0]"', "a tile index of 1/3", ""),
    ("steps_map", "steps:\n  - id: a\n", "steps:\n  a:\n", "steps as a map", ""),
    ("steps_empty", "steps:\n", "steps: []\nother:\n", "no steps", ""),
    ("unknown_top_key", "steps:", "stepz:", "a misspelt top-level key", "stepz"),
    ("unknown_step_key", "    after: [a, b]", "    afer: [a, b]", "a misspelt step key", "afer"),
    ("unclosed_quote", 'from: "tile[0,0]"', 'from: "tile[0,0]', "an unclosed quote (issue 16: swallows the file)", ""),
    ("duplicate_key", "dtype: fp16}", "dtype: fp16, dtype: fp32}", "a key given twice", "dtype"),
    ("platform_unknown", "program: corpus_prog\n", "program: corpus_prog\nplatform: mesh5x5\n", "an unknown platform name", ""),
    ("traffic_rate_zero", "steps:", "traffic: {network: noc, pattern: uniform, rate: 0, packet: 4flits, measure: 100cycles}\nsteps:", "traffic at rate 0", "rate"),
    ("traffic_rate_big", "steps:", "traffic: {network: noc, pattern: uniform, rate: 2, packet: 4flits, measure: 100cycles}\nsteps:", "traffic at rate 2", "rate"),
    ("traffic_measure_huge", "steps:", "traffic: {network: noc, pattern: uniform, rate: 1, packet: 1flits, measure: 1e12cycles}\nsteps:",
     "traffic over 1e12 cycles (too many packets)", ""),
    ("traffic_packet_zero", "steps:", "traffic: {network: noc, pattern: uniform, rate: 0.1, packet: 0flits, measure: 100cycles}\nsteps:", "packets of 0 flits", ""),
    ("traffic_flit_tiny", "steps:", "traffic: {network: noc, pattern: uniform, rate: 0.1, packet: 4flits, flit: 1B, measure: 100cycles}\nsteps:",
     "1-byte flits: no payload after the header", ""),
    ("traffic_network_tile", "steps:", "traffic: {network: tile, pattern: uniform, rate: 0.1, packet: 4flits, measure: 100cycles}\nsteps:", "traffic on a tile", ""),
    ("traffic_pattern_unknown", "steps:", "traffic: {network: noc, pattern: unifrom, rate: 0.1, packet: 4flits, measure: 100cycles}\nsteps:", "a misspelt pattern", "unifrom"),
    ("traffic_hotspot_out", "steps:", "traffic: {network: noc, pattern: hotspot, rate: 0.1, packet: 4flits, measure: 100cycles, hotspot: {nodes: [\"9,9\"], fraction: 0.5}}\nsteps:",
     "a hotspot outside the mesh", ""),
    ("traffic_seed_negative", "steps:", "traffic: {network: noc, pattern: uniform, rate: 0.1, packet: 4flits, measure: 100cycles, seed: -1}\nsteps:", "a negative seed", ""),
    ("traffic_warmup_negative", "steps:", "traffic: {network: noc, pattern: uniform, rate: 0.1, packet: 4flits, measure: 100cycles, warmup: -5cycles}\nsteps:", "a negative warmup", ""),
    ("parameters_override_unknown", "steps:", "parameters: {n: 4}\nsteps:", "a program parameter nobody reads",
     None),
]


def programs():
    for name, old, new, what, err in PROGRAM_MUTATIONS:
        if err is None:
            out("program", name, sub(PROGRAM, old, new), what, expect="0: an unused program parameter is harmless, like an unused workload parameter")
            continue
        out("program", name, sub(PROGRAM, old, new), what, error=err or None)
    out("program", "valid_two_senders", PROGRAM, "the unmodified program", expect="0: the base of every mutation; it runs")
    out("program", "platform_as_program", PLATFORM, "a platform given as the program")
    out("program", "workload_as_program", WORKLOAD, "a workload given as the program")
    out("program", "only_name", "program: x\n", "a program with nothing in it")
    out("program", "emitted_bad_index", "program: e\nemitted:\n  ops: [\"x\"]\n  places: [\"tile[0,0]\"]\n  works: |\n    1 0 0 0 0 fp16 gemm 1 1 1 1\n"
        "  steps: |\n    compute 5 0 0 0 0 0 -\n", "an emitted program referring to op 5 of 1")
    out("program", "emitted_bad_columns", "program: e\nemitted:\n  ops: [\"x\"]\n  places: [\"tile[0,0]\"]\n  works: |\n    1 0 0\n"
        "  steps: |\n    compute 0 0 0 0 0 0 -\n", "an emitted program with a short works line")
    out("program", "emitted_after_forward", "program: e\nemitted:\n  ops: [\"x\"]\n  places: [\"tile[0,0]\"]\n  works: |\n    1 0 0 0 0 fp16 gemm 1 1 1 1\n"
        "  steps: |\n    compute 0 0 0 0 0 0 - after 1\n    compute 0 0 0 0 0 0 - after 0\n", "an emitted program whose steps wait on each other",
        error="its steps wait on each other in a cycle: step 0 (compute of op 'x') -> step 1 (compute of op 'x') -> "
        "step 0 (compute of op 'x') (2 steps are blocked)")
    out("program", "emitted_huge_start", "program: e\nemitted:\n  ops: [\"x\"]\n  places: [\"tile[0,0]\"]\n  works: |\n    1 0 0 0 0 fp16 gemm 1 1 1 1\n"
        "  steps: |\n    compute 0 0 0 0 0 99999999999999999999999 -\n", "an emitted start of 1e23 ticks")
    out("program", "emitted_transfer_huge", "program: e\nemitted:\n  ops: [\"x\"]\n  places: [\"tile[0,0]\", \"tile[1,0]\"]\n  works: |\n    1 0 0 0 0 fp16 gemm 1 1 1 1\n"
        "  steps: |\n    transfer 0 0 0 0 1 0 0 1000000000000000 0\n", "an emitted 1e15-byte transfer")
    raw("program", "empty", b"")
    raw("program", "binary_junk", bytes((i * 91 + 7) % 256 for i in range(4096)))


# ---------------------------------------------------------------------------------------------------------
# Sweeps: run with `tessel sweep --no-progress --jobs 1 FILE --out TMP` (bad specs fail before any point runs).
SWEEP_MUTATIONS = [
    ("axis_empty", "workload.m: [64, 128]", "workload.m: []", "an empty axis", ""),
    ("range_factor_one", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, factor: 1}", "a range that never advances (factor 1)", ""),
    ("range_factor_zero", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, factor: 0}", "factor 0", ""),
    ("range_factor_negative", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, factor: -2}", "factor -2", ""),
    ("range_factor_below_one", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, factor: 0.5}", "factor 0.5 upwards", ""),
    ("range_step_zero", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, step: 0}", "step 0", ""),
    ("range_step_negative", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, step: -8}", "a negative step upwards", ""),
    ("range_step_tiny", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, step: 1e-12}", "6e13 points from a tiny step", ""),
    ("range_count_huge", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, count: 1e12}", "a count of 1e12", ""),
    ("range_count_zero", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, count: 0}", "a count of 0", ""),
    ("range_count_fraction", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, count: 2.5}", "a count of 2.5", ""),
    ("range_reversed", "workload.m: [64, 128]", "workload.m: {from: 128, to: 64, step: 8}", "from above to", ""),
    ("range_nan", "workload.m: [64, 128]", "workload.m: {from: .nan, to: 64, step: 8}", "from NaN", ""),
    ("range_inf", "workload.m: [64, 128]", "workload.m: {from: 1, to: .inf, factor: 2}", "to infinity", ""),
    ("range_units_differ", "workload.m: [64, 128]", "workload.m: {from: 64KiB, to: 128ns, factor: 2}", "from a size to a time", ""),
    ("range_both", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, step: 8, factor: 2}", "step and factor at once", ""),
    ("range_log_zero", "workload.m: [64, 128]", "workload.m: {from: 0, to: 128, count: 4, scale: log}", "a log range from 0", ""),
    ("range_unknown_key", "workload.m: [64, 128]", "workload.m: {from: 64, to: 128, stpe: 8}", "a misspelt range key", "stpe"),
    ("cartesian_huge", "workload.m: [64, 128]",
     "workload.m: {from: 1, to: 1000000, step: 1}\n  workload.batch: {from: 1, to: 1000000, step: 1}", "1e12 points", ""),
    ("cartesian_many_axes", "workload.m: [64, 128]", "\n".join(
        "  p%d: {from: 1, to: 1000, step: 1}" % i for i in range(8)).strip(), "1e24 points over 8 axes", ""),
    ("zip_unequal", "metrics:", "zip: [[noc.link_bandwidth, workload.m]]\nmetrics:", "zipped axes of unequal length", None),
    ("zip_unknown", "metrics:", "zip: [[noc.link_bandwidth, workload.q]]\nmetrics:", "zip naming an axis that does not exist", "workload.q"),
    ("zip_twice", "metrics:", "zip: [[noc.link_bandwidth, workload.m], [workload.m, noc.link_bandwidth]]\nmetrics:", "an axis zipped twice", ""),
    ("derived_cycle", "workload.k: workload.m", "workload.k: workload.n\n  workload.n: workload.k", "derived parameters defined by each other", ""),
    ("derived_div0", "workload.k: workload.m", "workload.k: workload.m / 0", "a derived value of m / 0", ""),
    ("derived_dollar_div0", "workload.k: workload.m", "workload.k: \"${1/0}\"", "${1/0} (issue 16: unknown unit '/')", ""),
    ("derived_unknown", "workload.k: workload.m", "workload.k: workload.mm", "a derived value reading an unknown name", "workload.mm"),
    ("derived_syntax", "workload.k: workload.m", "workload.k: workload.m +* 2", "a syntax error in an expression", ""),
    ("derived_pow", "workload.k: workload.m", "workload.k: 10 ** 400", "a derived value of 10 ** 400", ""),
    ("derived_string_math", "workload.k: workload.m", "workload.k: noc.link_bandwidth * \"x\"", "a bandwidth times a string", ""),
    ("derived_huge", "workload.k: workload.m", "workload.k: 2 ** 62", "a derived k of 2^62 (a GEMM that must be refused)", ""),
    ("filter_none", "metrics:", "filter: \"workload.m > 1000\"\nmetrics:", "a filter that removes every point", ""),
    ("filter_syntax", "metrics:", "filter: \"workload.m >> 1000\"\nmetrics:", "a filter with a syntax error", ""),
    ("filter_unknown_unit", "metrics:", "filter: \"noc.link_bandwidth <= 16B/cycel\"\nmetrics:", "a misspelt unit in a filter", "B/cycel"),
    ("filter_string", "metrics:", "filter: \"hello\"\nmetrics:", "a filter that is a string", ""),
    ("metric_unknown", "metrics: [sim_time_s, bound_by]", "metrics: [sim_time_z, bound_by]", "a misspelt metric", "sim_time_z"),
    ("metric_expr_bad", "metrics: [sim_time_s, bound_by]", "metrics: [{name: x, expr: \"sim_time_s /\"}]", "a formula metric with a syntax error", ""),
    ("metrics_empty", "metrics: [sim_time_s, bound_by]", "metrics: []", "no metrics", None),
    ("timeout_negative", "timeout: 20s", "timeout: -5s", "a negative timeout", ""),
    ("timeout_word", "timeout: 20s", "timeout: forever", "a timeout that is a word", ""),
    ("timeout_huge", "timeout: 20s", "timeout: 1e300s", "a timeout of 1e300 s", ""),
    ("platform_unknown", "platform: mesh4x4", "platform: mesh5x5", "an unknown platform", "mesh5x5"),
    ("workload_unknown", "workload: gemm", "workload: gemmm", "an unknown workload", "gemmm"),
    ("param_unknown", "noc.link_bandwidth:", "noc.link_bandwith:", "a misspelt --set path", "link_bandwith"),
    ("param_bad_value", "[16B/cycle, 32B/cycle]", "[16B/cycle, 32GHz]", "a bandwidth axis with a frequency", ""),
    ("workload_param_unknown", "workload.m: [64, 128]", "workload.q: [64, 128]", "a workload parameter gemm lacks", "workload.q"),
    ("unclosed_quote", "sweep: corpus_sweep", "sweep: \"corpus_sweep", "an unclosed quote", ""),
    ("duplicate_axis", "  workload.m: [64, 128]\n", "  workload.m: [64, 128]\n  workload.m: [32]\n", "an axis given twice", "workload.m"),
    ("unknown_top_key", "axes:", "axis:", "a misspelt top-level key", "axis"),
    ("no_axes", "axes:\n  noc.link_bandwidth: [16B/cycle, 32B/cycle]\n  workload.m: [64, 128]\n", "", "a sweep with no axes", None),
    ("name_slash", "sweep: corpus_sweep", "sweep: ../../etc/x", "a sweep name with a path in it", None),
    ("axes_list", "axes:\n  noc.link_bandwidth: [16B/cycle, 32B/cycle]\n  workload.m: [64, 128]\n", "axes: [1, 2]\n", "axes as a list", ""),
    ("slurm_negative", "timeout: 20s", "timeout: 20s\nslurm: {cpus_per_task: -1}", "a negative Slurm CPU count", ""),
]


def sweeps():
    for name, old, new, what, err in SWEEP_MUTATIONS:
        if err is None:
            continue  # judged below, with their expected outcome
        out("sweep", name, sub(SWEEP, old, new), what, error=err or None)
    out("sweep", "zip_unequal", sub(SWEEP, "metrics:", "zip: [[noc.link_bandwidth, workload.m]]\nmetrics:").replace(
        "workload.m: [64, 128]", "workload.m: [64, 128, 256]"), "zipped axes of unequal length", error="zip")
    out("sweep", "valid_four_points", sub(SWEEP, "workload.m: [64, 128]", "workload.m: [64]"), "a small valid sweep",
        expect="0: two points that run")
    out("sweep", "metrics_empty", sub(sub(SWEEP, "metrics: [sim_time_s, bound_by]", "metrics: []"), "workload.m: [64, 128]", "workload.m: [64]"),
        "no metrics", error="metrics")
    out("sweep", "no_axes", sub(SWEEP, "axes:\n  noc.link_bandwidth: [16B/cycle, 32B/cycle]\n  workload.m: [64, 128]\n", "").replace(
        "derived:\n  workload.n: workload.m\n  workload.k: workload.m\n", ""), "a sweep with no axes")
    out("sweep", "name_slash", sub(SWEEP, "sweep: corpus_sweep", "sweep: ../../etc/x"), "a sweep name with a path in it")
    out("sweep", "platform_as_sweep", PLATFORM, "a platform given as the sweep")
    out("sweep", "only_name", "sweep: x\n", "a sweep with nothing in it")
    raw("sweep", "empty", b"")
    raw("sweep", "binary_junk", bytes((i * 13 + 5) % 256 for i in range(1024)))


# ---------------------------------------------------------------------------------------------------------
# ONNX models, written with a minimal protobuf encoder (no onnx package needed): run with
# `tessel run -q -p mesh4x4 -w FILE`.
def varint(n):
    n &= (1 << 64) - 1
    b = bytearray()
    while True:
        x = n & 0x7F
        n >>= 7
        if n:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)


def field(num, value):
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint((num << 3) | 2) + varint(len(value)) + value


def f32(num, value):
    return varint((num << 3) | 5) + struct.pack("<f", value)


def dim(d):
    if d is None:
        return field(1, b"")  # a dimension with neither a value nor a name
    return field(1, field(1, d) if isinstance(d, int) else field(2, d))  # TensorShapeProto.dim


def value_info(name, dims, elem=1):
    shape = b"".join(dim(d) for d in dims)
    tensor_type = field(1, elem) + field(2, shape)
    return field(1, name) + field(2, field(1, tensor_type))


def attr_i(name, i):
    return field(1, name) + field(3, i) + field(20, 2)


def attr_ints(name, ints):
    return field(1, name) + b"".join(field(8, i) for i in ints) + field(20, 7)


def node(op, inputs, outputs, attrs=(), name=None):
    b = b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs)
    b += field(3, name or outputs[0]) + field(4, op)
    return b + b"".join(field(5, a) for a in attrs)


def initializer(name, dims, elem=1, raw_data=None):
    b = b"".join(field(1, d) for d in dims) + field(2, elem) + field(8, name)
    if raw_data is not None:
        b += field(9, raw_data)
    return b


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8):
    g = b"".join(field(1, n) for n in nodes) + field(2, "g")
    g += b"".join(field(5, i) for i in inits)
    g += b"".join(field(11, i) for i in inputs) + b"".join(field(12, o) for o in outputs)
    return field(1, ir) + field(2, "corpus") + field(7, g) + field(8, field(2, opset))


def onnx_models():
    def w(name, data):
        # Unknown ops (and ops the importer does not model, such as Tile) import as generic ops with the model's
        # declared shapes (docs/onnx.md): meaningful models, run by cases.txt.
        raw("onnx_ok" if name in ("tile_huge", "unknown_op_custom_domain") else "onnx", name, data, ".onnx")

    mm = lambda a, b, c: model([node("MatMul", ["a", "b"], ["c"])], [value_info("a", a), value_info("b", b)], [value_info("c", c)])
    # Meaningful models live outside the area folder (cases.txt runs them and expects 0).
    raw("onnx_ok", "matmul_valid", mm([64, 64], [64, 64], [64, 64]), ".onnx")
    w("matmul_dims_2p32", mm([4294967296, 4294967296], [4294967296, 4294967296], [4294967296, 4294967296]))
    w("matmul_dims_overflow", mm([2**62, 2**62], [2**62, 2**62], [2**62, 2**62]))
    w("matmul_dim_negative", mm([-5, 64], [64, 64], [-5, 64]))
    w("matmul_dim_zero", mm([0, 64], [64, 64], [0, 64]))
    w("matmul_mismatch", mm([64, 32], [64, 64], [64, 64]))
    raw("onnx_ok", "matmul_symbolic", mm(["batch", 64], [64, 64], ["batch", 64]), ".onnx")
    # Symbolic dimensions kept as workload parameters by `tessel import -o` (tests/workload/onnx_symbolic_test.cpp):
    # two of them, a size that is their product, and three (more than the import keeps).
    raw("onnx_ok", "matmul_batch_seq", mm(["batch", "seq", 64], [64, 64], ["batch", "seq", 64]), ".onnx")
    raw("onnx_ok", "flatten_batch_seq", model([node("Flatten", ["x"], ["y"], [attr_i("axis", 2)])],
                                              [value_info("x", ["batch", "seq", 64])], [value_info("y", [None, 64])]), ".onnx")
    raw("onnx_ok", "matmul_three_symbols", mm(["batch", "heads", "seq", 64], [64, 64], ["batch", "heads", "seq", 64]), ".onnx")
    w("matmul_rank_huge", mm([1] * 300 + [4, 4], [4, 4], [4, 4]))
    conv = lambda x, k, attrs: model([node("Conv", ["x", "k"], ["y"], attrs)], [value_info("x", x), value_info("k", k)], [value_info("y", [1])])
    w("conv_overflow", conv([2**31, 2**31, 2**31, 2**31], [2**31, 2**31, 3, 3], []))
    w("conv_dims_overflow_0flop", conv([1, 3, 2**40, 2**40], [2**40, 3, 3, 3], []))
    w("conv_kernel_bigger", conv([1, 3, 8, 8], [4, 3, 16, 16], []))
    w("conv_stride_zero", conv([1, 3, 8, 8], [4, 3, 3, 3], [attr_ints("strides", [0, 0])]))
    w("conv_stride_negative", conv([1, 3, 8, 8], [4, 3, 3, 3], [attr_ints("strides", [-1, -1])]))
    w("conv_group_zero", conv([1, 3, 8, 8], [4, 3, 3, 3], [attr_i("group", 0)]))
    w("conv_pads_huge", conv([1, 3, 8, 8], [4, 3, 3, 3], [attr_ints("pads", [2**40] * 4)]))
    w("conv_dilation_huge", conv([1, 3, 8, 8], [4, 3, 3, 3], [attr_ints("dilations", [2**40, 2**40])]))
    w("conv_rank1", conv([8], [4], []))
    w("reshape_huge", model([node("Reshape", ["x", "s"], ["y"])], [value_info("x", [4, 4])], [value_info("y", [16])],
                            [initializer("s", [3], 7, struct.pack("<qqq", 2**40, 2**40, 2**40))]))
    w("reshape_two_minus_one", model([node("Reshape", ["x", "s"], ["y"])], [value_info("x", [4, 4])], [value_info("y", [16])],
                                     [initializer("s", [2], 7, struct.pack("<qq", -1, -1))]))
    w("reshape_raw_short", model([node("Reshape", ["x", "s"], ["y"])], [value_info("x", [4, 4])], [value_info("y", [16])],
                                 [initializer("s", [1000], 7, struct.pack("<q", 16))]))
    w("initializer_dims_huge", model([node("MatMul", ["a", "b"], ["c"])], [value_info("a", [4, 4])], [value_info("c", [4, 4])],
                                     [initializer("b", [2**40, 2**40], 1)]))
    w("expand_huge", model([node("Expand", ["x", "s"], ["y"])], [value_info("x", [1])], [value_info("y", [1])],
                           [initializer("s", [3], 7, struct.pack("<qqq", 2**30, 2**30, 2**30))]))
    w("range_huge", model([node("Range", ["a", "b", "d"], ["y"])], [], [value_info("y", [1])],
                          [initializer("a", [], 7, struct.pack("<q", 0)), initializer("b", [], 7, struct.pack("<q", 2**60)),
                           initializer("d", [], 7, struct.pack("<q", 1))]))
    w("range_count_infinite", model([node("Range", ["a", "b", "d"], ["y"])], [], [value_info("y", [1])],
                                    [initializer("a", [], 1, struct.pack("<f", 0.0)), initializer("b", [], 1, struct.pack("<f", 3e38)),
                                     initializer("d", [], 1, struct.pack("<f", 1e-38))]))
    w("range_delta_zero", model([node("Range", ["a", "b", "d"], ["y"])], [], [value_info("y", [1])],
                                [initializer("a", [], 7, struct.pack("<q", 0)), initializer("b", [], 7, struct.pack("<q", 10)),
                                 initializer("d", [], 7, struct.pack("<q", 0))]))
    w("constant_of_shape_huge", model([node("ConstantOfShape", ["s"], ["y"]), node("Relu", ["y"], ["z"])], [], [value_info("z", [1])],
                                      [initializer("s", [2], 7, struct.pack("<qq", 2**31, 2**31))]))
    w("tile_huge", model([node("Tile", ["x", "r"], ["y"])], [value_info("x", [4, 4])], [value_info("y", [1])],
                         [initializer("r", [2], 7, struct.pack("<qq", 2**40, 2**40))]))
    w("gather_index_out", model([node("Gather", ["x", "i"], ["y"], [attr_i("axis", 5)])], [value_info("x", [4, 4])], [value_info("y", [1])],
                                [initializer("i", [1], 7, struct.pack("<q", 99))]))
    w("slice_step_zero", model([node("Slice", ["x", "s", "e", "a", "st"], ["y"])], [value_info("x", [4, 4])], [value_info("y", [1])],
                               [initializer(n, [1], 7, struct.pack("<q", v)) for n, v in (("s", 0), ("e", 4), ("a", 0), ("st", 0))]))
    w("split_zero", model([node("Split", ["x", "s"], ["y", "z"], [attr_i("axis", 0)])], [value_info("x", [4, 4])], [value_info("y", [1])],
                          [initializer("s", [2], 7, struct.pack("<qq", 0, 0))]))
    w("transpose_perm_bad", model([node("Transpose", ["x"], ["y"], [attr_ints("perm", [0, 0])])], [value_info("x", [4, 4])], [value_info("y", [4, 4])]))
    w("cycle", model([node("Relu", ["b"], ["a"]), node("Relu", ["a"], ["b"])], [], [value_info("b", [4])]))
    w("self_loop", model([node("Relu", ["a"], ["a"])], [value_info("x", [4])], [value_info("a", [4])]))
    w("unknown_op_custom_domain", model([node("FooBar", ["x"], ["y"])], [value_info("x", [4, 4])], [value_info("y", [4, 4])]))
    w("no_nodes", model([], [value_info("x", [4])], [value_info("x", [4])]))
    w("no_graph", field(1, 8) + field(8, field(2, 13)))
    w("opset_huge", model([node("Relu", ["x"], ["y"])], [value_info("x", [4])], [value_info("y", [4])], opset=2**40))
    w("opset_zero", model([node("Relu", ["x"], ["y"])], [value_info("x", [4])], [value_info("y", [4])], opset=0))
    w("undefined_input", model([node("Relu", ["nothing"], ["y"])], [value_info("x", [4])], [value_info("y", [4])]))
    w("elem_type_unknown", model([node("Relu", ["x"], ["y"])], [value_info("x", [4], elem=99)], [value_info("y", [4])]))
    w("duplicate_output", model([node("Relu", ["x"], ["y"]), node("Relu", ["x"], ["y"], name="y2")], [value_info("x", [4])], [value_info("y", [4])]))
    w("empty", b"")
    w("junk", bytes((i * 37 + 11) % 256 for i in range(1000)))
    w("yaml_text", WORKLOAD.encode())
    w("length_overflow", varint((7 << 3) | 2) + varint(2**62) + b"abc")
    w("deep_nesting", b"".join(varint((7 << 3) | 2) + varint(0xFFFFFF) for _ in range(5000)))
    real = open(os.path.join(ROOT, "workloads/onnx/resnet18.onnx"), "rb").read()
    for frac in (1, 10, 50, 90, 99):
        w("resnet18_truncated_%d" % frac, real[: len(real) * frac // 100])
    for k, pos in enumerate((100, 1000, 5000, 12000, 20000)):
        b = bytearray(real)
        for j in range(8):
            b[(pos + j * 131) % len(b)] ^= 0xFF
        w("resnet18_flipped_%d" % k, bytes(b))


def main():
    for area in ("platform", "workload", "program", "sweep", "onnx", "onnx_ok", "yaml_ok"):
        shutil.rmtree(os.path.join(HERE, area), ignore_errors=True)
    platforms()
    workloads()
    programs()
    sweeps()
    onnx_models()
    print("make_corpus: %d files" % len(written))


if __name__ == "__main__":
    main()
