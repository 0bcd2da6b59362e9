"""The memory bound of loading a graph file (docs/security.md, "Memory"): with the default limits,
a file whose graph document is J bytes (decompressed) makes `graphflow.load` use at most
LOAD_PEAK_PER_DOC_BYTE x J + the declared tensor data (x3: the zip member, its `.npy` copies, one
conversion) + a constant, and J itself is at most max(1 MiB, the file's size F): so at most
LOAD_PEAK_PER_DOC_BYTE x F + 3 x the tensor data beyond a constant floor.

Each hostile file is built to maximize memory per byte of JSON (empty containers, minimal op
entries, many inputs/outputs/control inputs per op, long chains); they are loaded in a fresh
process so that the measured peak is the load's own."""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import file_io
from graphflow.framework.errors import GraphFormatError

LOAD_PEAK_PER_DOC_BYTE = 32       # measured worst case below: ~27 (Unpack with 20k outputs)
TENSOR_COPIES = 3
TRACED_SLACK = 1 << 20            # the load's own fixed allocations (caches, modules' first use)
RSS_SLACK = 48 << 20              # interpreter, allocator arenas and pages touched by first use
N = 6_000


def _doc(ops, **extra):
    doc = {"format": "graphflow-graph", "version": 1,
           "signatures": {"inputs": {}, "outputs": {}}, "ops": ops, **extra}
    return json.dumps(doc, separators=(",", ":")).encode()


def _placeholder(shape):
    return {"name": "x", "type": "Placeholder",
            "attrs": {"dtype": "float32", "shape": {"tuple": shape}}, "outputs": [["float32", shape]]}


def _hostile_documents():
    yield "empty_lists", _doc([], junk=[[]] * (4 * N))
    yield "empty_dicts_in_attr", _doc([{"name": "c", "type": "NoOp", "attrs": {"x": [{}] * (4 * N)}}])
    yield "short_strings", _doc([], junk=[f"{i % 100:02d}" for i in range(4 * N)])
    yield "minimal_noops", _doc([{"name": f"{i:x}", "type": "NoOp"} for i in range(N)])
    yield "noop_chain", _doc([{"name": f"{i:x}", "type": "NoOp",
                               **({"control_inputs": [f"{i - 1:x}"]} if i else {})}
                              for i in range(N // 3)])
    yield "identity_chain", _doc([_placeholder([2])] + [
        {"name": f"{i:x}", "type": "Identity", "inputs": [f"{i - 1:x}:0" if i else "x:0"],
         "outputs": [["float32", [2]]], "source": ["m.py", i, "f"]} for i in range(N // 3)])
    yield "many_inputs", _doc([_placeholder([2]), {"name": "s", "type": "AddN",
                                                   "inputs": ["x:0"] * N,
                                                   "outputs": [["float32", [2]]]}])
    yield "many_controls", _doc([{"name": "a", "type": "NoOp"},
                                 {"name": "b", "type": "NoOp", "control_inputs": ["a"] * N}])
    yield "many_outputs", _doc([_placeholder([N]), {"name": "u", "type": "Unpack", "inputs": ["x:0"],
                                                    "attrs": {"num": N, "axis": 0},
                                                    "outputs": [["float32", []]] * N}])


def _write(path, document, npz=None, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        zf.writestr("graph.json", document)
        if npz is not None:
            zf.writestr(file_io.zip_entry("tensors.npz"), npz)


_CHILD = r"""
import gc, json, sys, tracemalloc
import graphflow as tf
from graphflow.framework.errors import GraphFormatError

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

tf.load(sys.argv[1])  # a small valid file first: modules and caches that any load needs
mode, results = sys.argv[2], {}
for path in sys.argv[3:]:
    gc.collect()
    if mode == "rss":
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak (VmHWM) to the current RSS
        base = status("VmRSS")
    else:
        tracemalloc.start()
    try:
        model = tf.load(path)
        outcome = model.graph.num_ops()
    except GraphFormatError as exc:
        outcome = str(exc)
    if mode == "rss":
        results[path] = [status("VmHWM") - base, outcome]
    else:
        results[path] = [tracemalloc.get_traced_memory()[1], outcome]
        tracemalloc.stop()
    model = None
print(json.dumps(results))
"""


def _peaks(mode, small, paths):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(tf.__file__)), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _CHILD, small, mode, *paths], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    files = {}
    for name, document in _hostile_documents():
        path = str(d / f"{name}.gfz")
        _write(path, document)
        files[path] = (name, len(document), 0)
        assert len(document) <= os.path.getsize(path)  # stored: a document never exceeds its file
    weights = np.arange(1 << 20, dtype=np.float32)  # 4 MiB of declared tensor data
    document = _doc([{"name": "w", "type": "Const", "attrs": {
        "value": {"tensor": {"dtype": "float32", "shape": [1 << 20], "data": "w"}}},
        "outputs": [["float32", [1 << 20]]]}])
    path = str(d / "tensor.gfz")
    _write(path, document, file_io.npz_bytes({"w": weights}))
    files[path] = ("tensor", len(document), weights.nbytes)
    small = str(d / "small.gfz")
    _write(small, _doc([{"name": "a", "type": "NoOp"}]))
    return small, files


def _bound(doc_bytes, tensor_bytes, slack):
    return LOAD_PEAK_PER_DOC_BYTE * doc_bytes + TENSOR_COPIES * tensor_bytes + slack


def test_every_hostile_file_loads_within_the_stated_multiple_of_its_document(hostile_files):
    small, files = hostile_files
    peaks = _peaks("traced", small, list(files))
    worst = 0.0
    for path, (peak, outcome) in peaks.items():
        name, doc_bytes, tensor_bytes = files[path]
        assert peak <= _bound(doc_bytes, tensor_bytes, TRACED_SLACK), (name, peak, doc_bytes, outcome)
        if not tensor_bytes:
            worst = max(worst, peak / doc_bytes)
            print(f"{name}: document {doc_bytes} B, traced peak {peak} B ({peak / doc_bytes:.1f}x)")
        # the same bound against the file's size (the document is stored, so J <= F)
        assert peak <= _bound(os.path.getsize(path), tensor_bytes, TRACED_SLACK)
    assert worst > LOAD_PEAK_PER_DOC_BYTE / 2  # the files do probe the bound (it is not loose)
    loaded = {files[p][0]: outcome for p, (_, outcome) in peaks.items()}
    assert loaded["minimal_noops"] == N and loaded["many_outputs"] == 2 and loaded["tensor"] == 1
    assert "unknown fields ['junk']" in loaded["empty_lists"]


@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK),
                    reason="peak RSS needs Linux's /proc/self/clear_refs")
def test_peak_rss_of_the_largest_hostile_load_is_within_the_bound(hostile_files):
    small, files = hostile_files
    largest = max(files, key=lambda p: files[p][1])
    (rss, outcome), = _peaks("rss", small, [largest]).values()
    name, doc_bytes, tensor_bytes = files[largest]
    assert rss <= _bound(doc_bytes, tensor_bytes, RSS_SLACK), (name, rss, doc_bytes, outcome)


def test_a_document_expanding_past_its_file_is_refused_before_decompressing(tmp_path):
    path = str(tmp_path / "bomb.gfz")
    _write(path, _doc([], pad=" " * (4 << 20)), compression=zipfile.ZIP_DEFLATED)
    size = os.path.getsize(path)  # 4 MiB of JSON in a file of a few KB
    assert size < 64 << 10
    assert file_io.default_limits_for(path).max_json_bytes == file_io.JSON_FLOOR_BYTES
    with pytest.raises(GraphFormatError, match="'graph.json' declares [0-9]+ bytes, more than "
                                               "the limit of 1048576: its compressed document "
                                               "expands [0-9]+x"):
        tf.load(path)
    # a file the user trusts (an older graphflow compressed the document) loads with limits
    with pytest.raises(GraphFormatError, match="unknown fields \\['pad'\\]"):
        tf.load(path, limits=file_io.DEFAULT_LIMITS)


def test_a_compressed_document_within_the_floor_still_loads(tmp_path):
    path = str(tmp_path / "small_deflated.gfz")
    _write(path, _doc([{"name": f"n{i}", "type": "NoOp"} for i in range(2000)]),
           compression=zipfile.ZIP_DEFLATED)
    assert tf.load(path).graph.num_ops() == 2000


def test_saved_files_store_the_document_uncompressed_and_load_by_default(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    ops = [x]
    for i in range(30_000):  # a ~3 MB document: over the floor, so only its storage lets it load
        ops.append(tf.identity(ops[-1], name=f"step_{i}"))
    path = str(tmp_path / "big.gfz")
    tf.save(path, inputs={"x": x}, outputs={"y": ops[-1]})
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("graph.json")
    assert info.compress_type == zipfile.ZIP_STORED and info.file_size > file_io.JSON_FLOOR_BYTES
    assert info.file_size <= file_io.default_limits_for(path).max_json_bytes
    model = tf.load(path)
    np.testing.assert_array_equal(model.run({"x": np.ones((2, 3), np.float32)})["y"],
                                  np.ones((2, 3), np.float32))
