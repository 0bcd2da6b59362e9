"""Mutations of valid graph files for the fuzz test and `benchmarks/fuzz_graph_files.py`.

`mutants(data, rng)` yields (kind, bytes) variations of one valid `.gfz` file: byte flips and
truncations of the container, and JSON-level edits of `graph.json` (every attr of an op set to values
of every wrong type, inputs dropped or added, edges that form cycles, declared dims such as 2**63,
wrong output counts). `outcome(path)` loads one file and says what happened: "loaded" (and ran),
"rejected" (GraphFormatError), or the unexpected exception, which the callers count as failures.
"""

import io
import json
import zipfile

import numpy as np

import graphflow as tf
from graphflow.fileformat.io_policy import IOPolicyError
from graphflow.framework.errors import GraphFormatError
from tests.tooling import Bounds

WRONG_VALUES = [True, False, 0, -1, 2**63, 1.5, float("nan"), "", "no", "float32", [], [1, "a"],
                [[1]], {}, {"tuple": [2**63]}, {"dtype": "nope"}, {"tensor": {"dtype": "float32",
                                                                              "shape": [2**40]}},
                None]


def _rezip(doc, data):
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            z.writestr(info.filename, json.dumps(doc) if info.filename == "graph.json"
                       else src.read(info.filename))
    return out.getvalue()


def _json_edits(doc, rng):
    ops = doc["ops"]
    for i, op in enumerate(ops):
        for key in op.get("attrs", {}):
            for wrong in WRONG_VALUES:
                edited = json.loads(json.dumps(doc))
                edited["ops"][i]["attrs"][key] = wrong
                yield f"attr {op['type']}.{key}", edited
        if op.get("inputs"):
            edited = json.loads(json.dumps(doc))
            edited["ops"][i]["inputs"] = edited["ops"][i]["inputs"][1:]
            yield "input dropped", edited
            edited = json.loads(json.dumps(doc))
            edited["ops"][i]["inputs"].append(edited["ops"][i]["inputs"][0])
            yield "input added", edited
            edited = json.loads(json.dumps(doc))
            later = ops[int(rng.integers(i, len(ops)))]["name"]
            edited["ops"][i]["inputs"][0] = f"{later}:0"
            yield "cycle", edited
        edited = json.loads(json.dumps(doc))
        edited["ops"][i]["outputs"] = [["float32", [2**63, 2**63]]] * 3
        yield "huge dims, output count", edited
    edited = json.loads(json.dumps(doc))
    edited["ops"] = edited["ops"] * 2
    yield "duplicate names", edited


def mutants(data, rng, byte_flips=20, truncations=10):
    """(kind, bytes) mutants of the valid file `data`."""
    for _ in range(byte_flips):
        flipped = bytearray(data)
        for pos in rng.integers(0, len(data), int(rng.integers(1, 8))):
            flipped[pos] ^= int(rng.integers(1, 256))
        yield "byte flip", bytes(flipped)
    for cut in rng.integers(0, len(data), truncations):
        yield "truncated", data[:cut]
    doc = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("graph.json"))
    for kind, edited in _json_edits(doc, rng):
        yield kind, _rezip(edited, data)


def outcome(path, feeds=None, seconds=5.0, max_bytes=64 << 20):
    """'loaded' or 'rejected' for acceptable outcomes, else a description of what went wrong."""
    bounds = Bounds()
    try:
        with tf.load(path) as model:
            if feeds is not None:
                try:
                    model.run({k: v for k, v in feeds.items() if k in model.inputs})
                except (tf.errors.OpError, KeyError, ValueError, TypeError):
                    pass  # a well-formed file whose graph fails at run time: an ordinary error
        result = "loaded"
    except (GraphFormatError, IOPolicyError):  # refusing ops that reach outside is a rejection
        result = "rejected"
    except Exception as exc:  # anything else is a bug the fuzzer found
        result = f"{type(exc).__name__}: {exc}"
    finally:
        bounds.stop()
    return bounds.verdict(result, seconds, max_bytes)


def sample_file(path):
    """A small valid file with attrs of many types (the fuzz seed), and its feeds."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        h = tf.nn.relu(tf.matmul(x, w, transpose_b=False) + 0.5)
        y = tf.reduce_sum(tf.nn.softmax(h), axis=1, keepdims=True)
        z = tf.concat([tf.transpose(h), tf.reshape(tf.cast(h > 0, tf.float32), [3, -1])], axis=1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.save(path, inputs={"x": x}, outputs={"y": y, "z": z}, session=sess)
    return {"x": np.ones((2, 4), np.float32)}
