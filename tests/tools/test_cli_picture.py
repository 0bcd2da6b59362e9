"""`graphflow inspect --svg/--dot` of a saved model: by default what its outputs need from its
inputs at inference (the README's digits CNN as one readable column, no initializers, no input
pipeline), `--all` for every op, `--outputs` to choose; loops and conditionals drawn with their
functions inside."""

import importlib.util
import io
import pathlib
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import cli, viz
from tests.tooling import needs_program

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"
SVG = "{http://www.w3.org/2000/svg}"


def _inspect(*args):
    out = io.StringIO()
    status = cli.main(["inspect", *map(str, args), "--brief"], out=out)
    return status, out.getvalue()


@pytest.fixture(scope="module")
def digits_cnn(tmp_path_factory):
    """The README's CNN as `examples/train_digits.py` saves it (its own `build`, untrained): the
    file holds 93 ops, 61 of them variable initializers and the tf.data input pipeline."""
    pytest.importorskip("sklearn", reason="the digits example imports scikit-learn")
    pytest.importorskip("tqdm", reason="the digits example imports tqdm")
    spec = importlib.util.spec_from_file_location("train_digits_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    data = (np.zeros([8, 64], np.float32), np.zeros([8], np.int64))
    graph, t = example.build("cnn", data, batch_size=4, epochs=1)
    path = tmp_path_factory.mktemp("models") / "digits_cnn.gfz"
    with graph.as_default(), tf.Session(graph=graph) as sess:
        sess.run(t["init"])
        tf.save(str(path), inputs={"x": t["x"]}, outputs={"probs": t["probs"]}, session=sess)
    return path


# the CNN's own ops: input, 2 reshape shapes, 10 variables, 3 x (Conv2D, BiasAdd, Relu),
# 2 MaxPool, 2 Reshape, 2 x (MatMul, BiasAdd), a Relu and the Softmax
CNN_OPS = 32


def _nodes(svg_text):
    root = ET.fromstring(svg_text)
    return [g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def _size_px(svg_text):
    root = ET.fromstring(svg_text)
    return [float(root.get(k).removesuffix("pt")) * 96 / 72 for k in ("width", "height")]


@needs_program("dot", "Graphviz draws the --svg picture")
def test_the_default_picture_of_the_digits_cnn_is_the_model(digits_cnn, tmp_path):
    status, text = _inspect(digits_cnn, "--svg", tmp_path / "cnn.svg", "--dot", tmp_path / "c.dot")
    assert status == 0
    assert ("wrote " + str(tmp_path / "cnn.svg") + ": digits_cnn.gfz: probs from x at inference, "
            f"{CNN_OPS} of 93 ops (initializers and ops no output needs left out; --all draws "
            "every op)") in text.splitlines()
    svg = (tmp_path / "cnn.svg").read_text(encoding="utf-8")
    nodes = _nodes(svg)
    assert len(nodes) == CNN_OPS
    with tf.load(str(digits_cnn)) as model:
        types = {op.name: op.type for op in model.graph.get_operations()}
    drawn = [types[n] for n in nodes]
    assert drawn.count("VariableV2") == 10 and drawn.count("Conv2D") == 3
    assert not {"Assign", "RandomUniform", "Fill", "IteratorGetNext"} & set(drawn)
    assert "x" in nodes and "probs" in nodes
    # one column at screen size (Graphviz 2.43-9 lays it out in ~520 x 1620 px)
    width, height = _size_px(svg)
    assert width <= 1200 and height <= 1800, (width, height)
    # the DOT file draws the same picture
    assert set(re.findall(r'^\s*"([^"]+)" \[label=', (tmp_path / "c.dot").read_text(), re.M)) \
        == set(nodes)


@needs_program("dot", "Graphviz draws the --svg picture")
def test_all_draws_every_op_and_outputs_chooses(digits_cnn, tmp_path):
    status, text = _inspect(digits_cnn, "--all", "--svg", tmp_path / "all.svg")
    assert status == 0 and "digits_cnn.gfz: all 93 ops" in text
    assert len(_nodes((tmp_path / "all.svg").read_text(encoding="utf-8"))) == 93
    # initializers sit in a box named after their variable
    assert '"cluster_conv2d/kernel/Initializer"' in viz.to_dot(tf.load(str(digits_cnn)),
                                                               compact=True)


def test_outputs_chooses_what_to_draw(tmp_path, capsys):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.ones([3, 2], np.float32), name="w")
    y = tf.matmul(x, w, name="y")
    total = tf.reduce_sum(x, name="total")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.save(str(tmp_path / "m.gfz"), {"x": x}, {"y": y, "total": total}, session=sess)
    status, text = _inspect(tmp_path / "m.gfz", "--outputs", "total", "--dot", tmp_path / "t.dot")
    assert status == 0 and "m.gfz: total from x at inference, 2 of 6 ops" in text
    dot = (tmp_path / "t.dot").read_text()
    assert '"total"' in dot and '"w"' not in dot and '"y"' not in dot
    status, _ = _inspect(tmp_path / "m.gfz", "--outputs", "nope", "--dot", tmp_path / "t.dot")
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "--outputs: unknown output(s) ['nope']; the graph's outputs are ['total', 'y']" in err


def test_loops_and_conds_are_drawn_with_their_functions(tmp_path):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.variable_scope("rnn"):
        w = tf.get_variable("w", [4, 4])
        _, h = tf.while_loop(lambda i, h: i < 3,
                             lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + x)),
                             [tf.constant(0), x])
    out = tf.cond(tf.reduce_sum(h) > 0, lambda: h * 2.0, lambda: h - 1.0)
    loss = tf.reduce_sum(out)
    tf.gradients(loss, [w])  # gradient functions: training only, not drawn
    dot = viz.to_dot(fetches=out)
    clusters = re.findall(r'subgraph "(cluster_(?:op|fn):[^"]+)"', dot)
    assert clusters == ["cluster_op:cond/If", "cluster_fn:cond/If::then_branch::",
                        "cluster_fn:cond/If::else_branch::", "cluster_op:rnn/while/While",
                        "cluster_fn:rnn/while/While::cond::", "cluster_fn:rnn/while/While::body::"]
    body = dot[dot.index('"cluster_fn:rnn/while/While::body::"'):]
    assert '"rnn/while/While::body::MatMul" [label="MatMul' in body
    assert '"rnn/while/While::body::MatMul" -> "rnn/while/While::body::Add_1"' in body
    assert '"rnn/while/While" -> "rnn/while/While::body::capture" [style=dotted' in dot
    assert "grad" not in dot.replace("gradient", "")
    opaque = viz.to_dot(fetches=out, bodies=False)
    assert "cluster_op:" not in opaque and '"rnn/while/While" [label=' in opaque
