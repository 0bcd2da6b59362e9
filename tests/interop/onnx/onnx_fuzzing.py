"""Mutations of valid ONNX files for `test_fuzz_onnx.py` and `benchmarks/fuzz_onnx_files.py`.

`seed_models(folder)` exports a few graphflow models (an MLP, a small conv net, a model with a
`tf.cond` and a `tf.while_loop`) to ONNX files. `mutants(data, rng)` yields (kind, bytes)
variations of one of them: byte flips and truncations of the protobuf, and edits of the decoded
model: If nodes nested in If branches, cycles and self loops, inputs nothing defines, names
defined twice, huge and negative dims in initializers and inputs, initializers whose data does
not match their dims, shape inputs of ConstantOfShape/Expand above 2**31. `outcome(data)`
imports one and says what happened: "loaded", "rejected" (GraphFormatError), or the unexpected
exception or bound exceeded, which callers count as failures.
"""

import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import graphflow as tf
from graphflow.framework.errors import GraphFormatError
from graphflow.interop import onnx as gf_onnx
from tests.tooling import Bounds


def seed_models(folder):
    """Paths of ONNX files exported by graphflow (the fuzz seeds)."""
    paths = []
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        h = tf.layers.dense(x, 8, activation=tf.nn.relu)
        y = tf.nn.softmax(tf.layers.dense(h, 3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths.append(gf_onnx.export({"y": y}, f"{folder}/mlp.onnx", inputs={"x": x},
                                        session=sess))
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 8, 8, 2], name="x")
        c = tf.layers.conv2d(x, 3, 3, activation=tf.nn.relu)
        p = tf.reshape(tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [1, -1])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths.append(gf_onnx.export({"y": tf.reduce_mean(p, axis=1)}, f"{folder}/conv.onnx",
                                        inputs={"x": x}, session=sess))
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: tf.tanh(x))
        _, z = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 0.5 + y),
                             [tf.constant(0), y])
        with tf.Session() as sess:
            paths.append(gf_onnx.export({"z": z}, f"{folder}/control.onnx", inputs={"x": x},
                                        session=sess))
    return paths


def _graphs(graph):
    """`graph` and all its sub-graphs (mutable protobuf references)."""
    out, stack = [], [graph]
    while stack:
        g = stack.pop()
        out.append(g)
        for node in g.node:
            for attr in node.attribute:
                if attr.HasField("g"):
                    stack.append(attr.g)
                stack.extend(attr.graphs)
    return out


def _edits(model, rng):
    """(kind, edited ModelProto) pairs, one edit each."""
    def copy():
        m = onnx.ModelProto()
        m.CopyFrom(model)
        return m, [g for g in _graphs(m.graph) if len(g.node)]

    def pick(items):
        return items[int(rng.integers(0, len(items)))]

    m, graphs = copy()
    g = pick(graphs)
    node = pick(g.node)
    if node.input:
        node.input[int(rng.integers(0, len(node.input)))] = "dangling"
    else:
        node.input.append("dangling")
    yield "dangling input", m
    m, graphs = copy()
    node = pick(pick(graphs).node)
    if node.input:
        node.input[0] = node.output[0]
        yield "self loop", m
    m, graphs = copy()
    g = pick(graphs)
    if len(g.node) > 1:
        i = int(rng.integers(0, len(g.node) - 1))
        if g.node[i].input:
            g.node[i].input[0] = g.node[int(rng.integers(i + 1, len(g.node)))].output[0]
            yield "cycle", m
    m, graphs = copy()
    g = pick(graphs)
    if len(g.node) > 1:
        a, b = rng.choice(len(g.node), 2, replace=False)
        g.node[int(b)].output[0] = g.node[int(a)].output[0]
        yield "duplicate output name", m
    m, graphs = copy()
    pick(pick(graphs).node).name = "dup"
    if m.graph.input:
        m.graph.input.append(m.graph.input[0])
        yield "duplicate input", m
    m, _ = copy()
    if m.graph.initializer:
        init = pick(m.graph.initializer)
        if not init.dims:
            init.dims.append(1)
        init.dims[int(rng.integers(0, len(init.dims)))] = pick([2**31, 2**40, 2**62, -1, 0, 3])
        yield "initializer dims", m
    m, _ = copy()
    for vi in m.graph.input:
        for dim in vi.type.tensor_type.shape.dim:
            dim.dim_value = pick([2**40, 2**63 - 1, -5, 0])
    yield "input dims", m
    m, _ = copy()
    if m.graph.node:
        first = m.graph.node[0]
        big = helper.make_tensor("huge_shape", TensorProto.INT64, [2],
                                 [pick([0, 1]), pick([2**31 + 5, 2**40, -2, 2**62])])
        m.graph.initializer.append(big)
        op = pick(["ConstantOfShape", "Expand", "Tile", "Reshape"])
        src = first.output[0]
        inputs = ["huge_shape"] if op == "ConstantOfShape" else [src, "huge_shape"]
        m.graph.node.append(helper.make_node(op, inputs, ["huge_out"]))
        m.graph.node.append(helper.make_node("Shape", ["huge_out"], ["huge_dims"]))
        m.graph.output.append(helper.make_tensor_value_info("huge_dims", TensorProto.INT64, [2]))
        yield f"huge {op}", m


def nested_ifs(depth, leaf_op="Identity"):
    """A main graph whose one If nests `depth` Ifs in its then-branches."""
    def leaf(name):
        return helper.make_graph([helper.make_node(leaf_op, ["x"], [name])], "leaf", [],
                                 [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1])])
    branch = leaf("y0")
    for level in range(1, depth + 1):
        node = helper.make_node("If", ["c"], [f"y{level}"], then_branch=branch,
                                else_branch=leaf(f"e{level}"))
        branch = helper.make_graph([node], f"g{level}", [],
                                   [helper.make_tensor_value_info(f"y{level}", TensorProto.FLOAT,
                                                                  [1])])
    branch.input.extend([helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])])
    return helper.make_model(branch, opset_imports=[helper.make_opsetid("", 13)])


def mutants(data, rng, byte_flips=40, truncations=20):
    """(kind, bytes) mutants of the valid ONNX file `data`."""
    for _ in range(byte_flips):
        flipped = bytearray(data)
        for pos in rng.integers(0, len(data), int(rng.integers(1, 8))):
            flipped[pos] ^= int(rng.integers(1, 256))
        yield "byte flip", bytes(flipped)
    for cut in rng.integers(0, len(data), truncations):
        yield "truncated", data[:cut]
    model = onnx.load_from_string(data)
    for kind, edited in _edits(model, rng):
        yield kind, edited.SerializeToString()
    depth = int(rng.integers(1, 31))  # (protobuf refuses to build ~33 and more)
    yield f"nested Ifs ({depth})", nested_ifs(depth, "Identity" if depth % 2 else "Neg") \
        .SerializeToString()


def outcome(data, seconds=2.0, max_bytes=64 << 20):
    """'loaded' or 'rejected' for acceptable outcomes, else a description of what went wrong."""
    bounds = Bounds()
    try:
        gf_onnx.import_model(data).close()
        result = "loaded"
    except GraphFormatError:
        result = "rejected"
    except Exception as exc:  # anything else is a bug the fuzzer found
        result = f"{type(exc).__name__}: {exc}"
    finally:
        bounds.stop()
    return bounds.verdict(result, seconds, max_bytes)


def run(paths, rounds, seed=0, **bounds):
    """Fuzz `rounds` rounds of mutants of every file in `paths`: (counts, failures, slowest)."""
    rng = np.random.default_rng(seed)
    counts, failures, slowest = {}, [], 0.0
    seeds = [open(p, "rb").read() for p in paths]
    for _ in range(rounds):
        for data in seeds:
            for kind, mutant in mutants(data, rng):
                t0 = time.monotonic()
                result = outcome(mutant, **bounds)
                slowest = max(slowest, time.monotonic() - t0)
                key = result if result in ("loaded", "rejected") else "failed"
                counts[key] = counts.get(key, 0) + 1
                if key == "failed":
                    failures.append(f"{kind}: {result}")
    return counts, failures, slowest
