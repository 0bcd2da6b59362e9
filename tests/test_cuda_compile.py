"""Compile every CUDA kernel graphflow can launch, with nvcc, on machines with or without a GPU.

- Every `.cu` source of `graphflow.kernels.cuda`, as the runtime loads it (headers inlined), with
  `nvcc --ptx -arch=sm_80` and `-arch=sm_90`, warnings as errors; plus a `-cubin` build of the GEMM
  source for sm_90 so ptxas checks its resources (registers, shared memory) and reports no spills.
- The code generator's output: every elementwise op type of the CUDA table for each dtype it
  accepts and each input layout (contiguous, scalar, broadcast), hand-written programs covering
  constants/casts/selects/integer corner cases, and the FusedElementwise programs the fusion pass
  produces for random elementwise graphs — all through the same nvcc check.

The PTX of the sources is kept (`ptx_entries`) so tests/test_cuda_kernels.py can check every launch
against the kernel's real parameter list. Without nvcc these tests are skipped with the reason.
"""

import concurrent.futures
import itertools
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cuda
from graphflow.kernels.cuda import codegen, elementwise, sources
from graphflow.optimizer_passes import optimize
from tests.tooling import needs_program

NVCC = shutil.which("nvcc")
ARCHS = ("sm_80", "sm_90")
pytestmark = needs_program("nvcc", "the CUDA toolkit compiles every kernel")

_pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
_jobs = {}
_workdir = tempfile.mkdtemp(prefix="graphflow-nvcc-")


def _run_nvcc(text, arch, mode, tag):
    path = os.path.join(_workdir, f"{tag}-{arch}{mode.replace('-', '_')}.cu")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    out = path[:-3] + (".ptx" if mode == "--ptx" else ".cubin")
    cmd = [NVCC, mode, f"-arch={arch}", "-O3", "-Werror", "all-warnings", "-o", out, path]
    if mode == "-cubin":
        cmd[4:4] = ["-Xptxas", "-warn-spills,-warn-lmem-usage"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    ptx = None
    if proc.returncode == 0 and mode == "--ptx":
        with open(out, encoding="utf-8") as f:
            ptx = f.read()
    return proc.returncode, (proc.stdout + proc.stderr).strip(), ptx, " ".join(cmd)


def compile_async(text, arch, mode="--ptx", tag="k"):
    """Start (once) an nvcc job for `text`; returns its future (rc, output, ptx, command)."""
    key = (sources.digest(text), arch, mode)
    job = _jobs.get(key)
    if job is None:
        job = _jobs[key] = _pool.submit(_run_nvcc, text, arch, mode, tag)
    return job


def check_compiles(text, arch, mode="--ptx", tag="k"):
    rc, output, ptx, cmd = compile_async(text, arch, mode, tag).result()
    assert rc == 0, f"nvcc failed ({cmd}):\n{output}"
    assert output == "", f"nvcc printed diagnostics ({cmd}):\n{output}"
    return ptx


# start every source compile at import time: the two cores work while pytest collects the rest
if NVCC is not None:
    for _name, _arch in itertools.product(sources.source_names(), ARCHS):
        compile_async(sources.load(_name), _arch, tag=_name[:-3])
    compile_async(sources.load("matmul.cu"), "sm_90", "-cubin", tag="matmul")

_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(([^)]*)\)", re.S)
_PARAM_SIZE = {"u64": 8, "s64": 8, "f64": 8, "b64": 8, "u32": 4, "s32": 4, "f32": 4, "b32": 4}


def ptx_entries(source_name, arch="sm_90"):
    """{kernel name: [parameter sizes in bytes]} of a package source, from its PTX."""
    ptx = check_compiles(sources.load(source_name), arch, tag=source_name[:-3])
    entries = {}
    for name, params in _ENTRY.findall(ptx):
        sizes = []
        for p in params.split(","):
            p = p.strip()
            if not p:
                continue
            m = re.search(r"\.b8\s+\w+\[(\d+)\]", p)
            if m:
                sizes.append(int(m.group(1)))
            else:
                sizes.append(_PARAM_SIZE[re.search(r"\.param\s+\.(\w+)", p).group(1)])
        entries[name] = sizes
    return entries


def format_sizes(fmt):
    """Parameter sizes of a PyCUDA prepared-call format ('qP72s' -> [8, 8, 72])."""
    sizes = []
    for count, code in re.findall(r"(\d*)([a-zA-Z])", fmt):
        if code == "s":
            sizes.append(int(count))
        else:
            sizes += [{"q": 8, "Q": 8, "P": 8, "d": 8, "i": 4, "f": 4}[code]] * int(count or 1)
    return sizes


# ---------------------------------------------------------------- the package sources
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sources.source_names())
def test_source_compiles_to_ptx(name, arch):
    ptx = check_compiles(sources.load(name), arch, tag=name[:-3])
    assert ".entry" in ptx, f"{name} defines no kernels"


def test_gemm_assembles_without_spills():
    """ptxas (through -cubin) accepts the GEMM kernels: registers, shared memory, no spills."""
    check_compiles(sources.load("matmul.cu"), "sm_90", "-cubin", tag="matmul")


def test_every_header_is_used_and_inlined():
    headers = sorted(n for n in os.listdir(sources.SOURCE_DIR) if n.endswith(".cuh"))
    assert headers == ["common.cuh", "elementwise.cuh", "special.cuh"]
    for name in sources.source_names():
        assert "#include" not in sources.load(name), f"{name}: an include was not inlined"
    assert "gf_floordiv" in codegen.generate(
        codegen.normalize(elementwise.single_op_program("FloorDiv", ["int32"] * 2, "int32", {})),
        ["c", "c"], 1)[0]


# ---------------------------------------------------------------- generated elementwise kernels
_DTYPES = ["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _single_op_programs():
    """(program, layouts) for every elementwise op type of the CUDA table and dtype it supports."""
    out = []
    for op_type in sorted(codegen.SUPPORTED_OPS):
        spec = cuda.spec(op_type)
        if spec is None:
            continue
        n_in = {**{k: 1 for k in codegen.UNARY}, **{k: 2 for k in codegen.BINARY},
                **{k: 3 for k in codegen.TERNARY}}.get(op_type, 3)
        for dt in _DTYPES:
            in_dtypes = [dt] * n_in
            if op_type == "Select":
                in_dtypes[0] = "bool"
            out_dt = "bool" if op_type in codegen.BOOL_RESULT else dt
            if op_type == "RealDiv" and np.dtype(dt).kind in "iu":
                out_dt = codegen._TRUEDIV.get(dt, dt)
            for target in (["float32", "int64", "bool"] if op_type == "Cast" else [out_dt]):
                attrs = {"alpha": 0.1, "DstT": target}
                try:
                    program = codegen.normalize(elementwise.single_op_program(
                        op_type, in_dtypes, target, attrs))
                except codegen.ProgramError:
                    continue
                if spec.unsupported(in_dtypes, [target], attrs) is not None:
                    continue
                layouts = ["c", "b", "s"][:n_in]
                out.append((program, layouts))
    return out


def _compile_generated(programs, tag, index64=True):
    """Compile generated kernels for (program, layouts) pairs in one translation unit per arch
    (32-bit indexing over rank 3, and with `index64` also 64-bit indexing over rank 2)."""
    kernels, names = [], set()
    variants = ((3, True), (2, False)) if index64 else ((3, True),)
    for program, layouts in programs:
        for ndim, index32 in variants:
            text, name, fmt = codegen.generate_kernel(program, layouts, ndim, index32)
            if name not in names:
                names.add(name)
                kernels.append(text)
    text = sources.expand(codegen.HEADER) + "\n".join(kernels)
    jobs = [compile_async(text, arch, tag=tag) for arch in ARCHS]
    for arch, job in zip(ARCHS, jobs):
        rc, output, ptx, cmd = job.result()
        assert rc == 0 and output == "", f"generated kernels ({tag}) fail on {arch}:\n{output}"
        assert len(_ENTRY.findall(ptx)) == len(names)
    return names


def test_every_elementwise_op_generates_compilable_kernels():
    programs = _single_op_programs()
    ops = {p["instructions"][0][0] for p, _ in programs}
    missing = {t for t in codegen.SUPPORTED_OPS if cuda.spec(t) is not None} - ops
    assert not missing, f"elementwise ops never generated: {sorted(missing)}"
    assert len(programs) > 200
    _compile_generated(programs, "single_ops", index64=False)


def _program(inputs, instructions):
    """A program of the elementwise program format whose output is its last instruction (dtypes
    left to the validator)."""
    return {"version": 1, "inputs": inputs, "output": len(inputs) + len(instructions) - 1,
            "instructions": [[op, refs, attrs, dtype] for op, refs, attrs, dtype in instructions]}


_TRANSCENDENTAL = ["Sigmoid", "Log1p", "Expm1", "Tanh", "Erf", "Softplus", "Softsign", "Elu", "Selu",
                   "Rsqrt", "Round", "Sin"]
HAND_WRITTEN = [
    # constants of every kind, casts both ways, select with a constant condition operand
    _program(["float32", "int32"], [
        ("Cast", [1], {"DstT": "float32"}, None),                   # 2
        ("Const", [], {"value": float("inf")}, "float32"),          # 3
        ("Mul", [0, 3], {}, None),                                  # 4
        ("Const", [], {"value": -0.0}, "float32"),                  # 5
        ("Greater", [4, 5], {}, None),                              # 6
        ("Const", [], {"value": float("nan")}, "float32"),          # 7
        ("Select", [6, 2, 7], {}, None),                            # 8
        ("Cast", [8], {"DstT": "bool"}, None),                      # 9
        ("Const", [], {"value": True}, "bool"),                     # 10
        ("LogicalXor", [9, 10], {}, None)]),                        # 11
    # integer corner cases: floor division/modulo, power, extreme literals
    _program(["int64", "int64"], [
        ("FloorDiv", [0, 1], {}, None), ("FloorMod", [0, 1], {}, None),    # 2, 3
        ("Const", [], {"value": 3}, "int64"), ("Pow", [2, 4], {}, None),    # 4, 5
        ("Const", [], {"value": -2**63}, "int64"), ("Add", [5, 6], {}, None),  # 6, 7
        ("AddN", [3, 7, 0], {}, None)]),                                   # 8
    _program(["uint8", "int8", "int16"], [
        ("Const", [], {"value": 3}, "uint8"), ("RealDiv", [0, 3], {}, None),  # 3, 4
        ("Abs", [1], {}, None), ("Square", [2], {}, None),                   # 5, 6
        ("Cast", [5], {"DstT": "int16"}, None), ("Maximum", [7, 6], {}, None),  # 7, 8
        ("Cast", [8], {"DstT": "float32"}, None), ("Add", [4, 9], {}, None)]),  # 9, 10
    # a long float64 chain with every transcendental
    _program(["float64"], [(op, [k], {}, None) for k, op in enumerate(_TRANSCENDENTAL)]),
]


def test_hand_written_programs_compile():
    programs = [(codegen.normalize(p), ["b"] * len(p["inputs"])) for p in HAND_WRITTEN]
    programs += [(codegen.normalize(p), ["s"] + ["c"] * (len(p["inputs"]) - 1)) for p in HAND_WRITTEN]
    _compile_generated(programs, "hand_written")


def _random_elementwise_graph(rng, n_ops):
    """A random graph of float32 elementwise ops over three inputs (one broadcast), with constants."""
    x = tf.placeholder(tf.float32, [8, 16], name="x")
    y = tf.placeholder(tf.float32, [8, 16], name="y")
    b = tf.placeholder(tf.float32, [16], name="b")
    values = [x, y, b]
    unary = [tf.tanh, tf.sigmoid, tf.nn.relu, tf.abs, tf.square, tf.exp, tf.negative, tf.sin,
             lambda v: tf.nn.leaky_relu(v, 0.3), lambda v: tf.cast(tf.cast(v, tf.int32), tf.float32)]
    binary = [tf.add, tf.multiply, tf.subtract, tf.maximum, tf.minimum,
              lambda p, q: tf.where(p > q, p, q * 0.5), lambda p, q: tf.clip_by_value(p, -1.0, 2.0) + q]
    for _ in range(n_ops):
        if rng.random() < 0.45:
            v = unary[rng.integers(len(unary))](values[rng.integers(len(values))])
        else:
            p, q = (values[i] for i in rng.integers(len(values), size=2))
            v = binary[rng.integers(len(binary))](p, q * float(rng.uniform(0.5, 2.0)))
        values.append(v)
    return values[-1], [x, y, b]


def test_fusion_pass_programs_compile():
    """Programs the fusion pass emits for random graphs go through the generator and nvcc."""
    rng = np.random.default_rng(7)
    programs = []
    for _ in range(12):
        tf.reset_default_graph()
        out, feeds = _random_elementwise_graph(rng, int(rng.integers(3, 14)))
        graph, _ = optimize(out, feeds=feeds)
        for op in graph.get_operations():
            if op.type == "FusedElementwise":
                program = codegen.normalize(op.attrs["program"])
                layouts = ["s" if t.shape.num_elements() == 1 else
                           ("c" if t.shape.as_list() == op.outputs[0].shape.as_list() else "b")
                           for t in op.inputs]
                programs.append((program, layouts))
    assert len(programs) >= 8, "the fusion pass fused too few random graphs to test the generator"
    names = _compile_generated(programs, "fusion_pass")
    assert len(names) >= len(programs)
