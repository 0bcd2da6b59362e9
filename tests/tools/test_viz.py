"""graphflow.tools.viz: the summary table, the debugprint tree, DOT clusters per name scope, SVG rendering
through Graphviz, the networkx export, fetch-restricted views and a 100k-op graph."""

import xml.etree.ElementTree as ET

import networkx as nx
import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import viz
from tests.tooling import needs_program


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.name_scope("dense"):
        w = tf.Variable(np.ones((3, 4), np.float32), name="w")
        y = tf.nn.relu(tf.matmul(x, w) + 1.0)
    square = y * y
    with tf.device("/cpu:0"):
        loss = tf.reduce_sum(square, name="loss")
    with tf.control_dependencies([loss]):
        done = tf.no_op(name="done")
    return x, w, y, loss, done


def test_summary_lists_every_op_with_types_shapes_devices_inputs():
    _model()
    text = viz.summary()
    lines = text.splitlines()
    assert lines[0].startswith("11 ops of 10 types")
    assert lines[1] == "1 variables, 12 parameters"
    rows = {line.split()[0]: line for line in lines[3:]}
    assert rows["dense/MatMul"].split() == ["dense/MatMul", "MatMul", "float32[?,4]", "-",
                                            "x:0,", "dense/w:0"]
    assert rows["loss"].split()[:4] == ["loss", "Sum", "float32[]", "/cpu:0"]
    assert rows["done"].split()[-1] == "^loss"
    assert viz.summary(max_ops=2).splitlines()[-1] == "... 9 more ops"


def test_debugprint_prints_a_tree_and_shared_nodes_once():
    x, _, y, loss, done = _model()
    lines = viz.debugprint(done).splitlines()
    assert lines[0] == "NoOp [id A] 'done'"
    assert lines[1] == " |^Sum [id B] 'loss' /cpu:0"  # a control input: the op itself
    assert lines[2] == " | |Mul [id C] 'Mul:0' float32 [?,4]"
    relu = [line for line in lines if "Relu" in line]
    assert relu == [" | | |Relu [id D] 'dense/Relu:0' float32 [?,4]",
                    " | | |Relu [id D] 'dense/Relu:0' float32 [?,4] ..."]  # x * x: shown once
    assert " | | | | | |Placeholder [id G] 'x:0' float32 [?,3]" in lines
    shallow = viz.debugprint([loss, x], max_depth=1).splitlines()
    assert shallow == ["Sum [id A] 'loss:0' float32 [] /cpu:0",
                       " |Mul [id B] 'Mul:0' float32 [?,4]",
                       "Placeholder [id C] 'x:0' float32 [?,3]"]


def _clusters(dot):
    return [line.strip() for line in dot.splitlines() if line.strip().startswith("subgraph")]


def test_dot_groups_name_scopes_into_nested_clusters():
    _, _, _, loss, _ = _model()
    dot = viz.to_dot()
    # the operand constant of `+ 1.0` sits under its consumer, dense/Add/y, as in TF1
    assert _clusters(dot) == ['subgraph "cluster_dense" {', 'subgraph "cluster_dense/Add" {',
                              'subgraph "cluster_dense/w" {']
    body = dot[dot.index('subgraph "cluster_dense/w"'):]
    assert '"dense/w/Assign"' in body.split("}")[0]  # the initializer sits in dense/w
    assert '"dense/MatMul" -> "dense/Add" [label="[?,4]"];' in dot
    assert '"loss" -> "done" [style=dashed];' in dot
    assert dot.count('"dense/Relu" -> "Mul"') == 2  # both inputs of y * y
    pruned = viz.to_dot(fetches=loss, show_shapes=False)
    assert "Assign" not in pruned and "done" not in pruned and "[label=" not in pruned.split(
        "->")[1]


def test_dot_quotes_awkward_names():
    tf.constant(1.0, name='say"hi"\\')
    dot = viz.to_dot()
    assert '"say\\"hi\\"\\\\" [label=' in dot


@needs_program("dot", "Graphviz draws the SVG")
def test_svg_rendering_draws_every_op_and_scope(tmp_path):
    _model()
    path = tmp_path / "g.svg"
    svg = viz.render_svg(path=str(path), rankdir="LR")
    assert path.read_text(encoding="utf-8") == svg
    root = ET.fromstring(svg)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    titles = {g.get("class"): [] for g in root.iter(f"{{{ns['svg']}}}g")}
    for g in root.iter(f"{{{ns['svg']}}}g"):
        title = g.find("svg:title", ns)
        if title is not None:
            titles.setdefault(g.get("class"), []).append(title.text)
    assert sorted(titles["node"]) == sorted(op.name for op in
                                            tf.get_default_graph().get_operations())
    assert sorted(titles["cluster"]) == ["cluster_dense", "cluster_dense/Add", "cluster_dense/w"]
    assert "dense/Relu&#45;&gt;Mul" in svg or "dense/Relu->Mul" in titles["edge"]


def test_svg_needs_the_dot_program(monkeypatch):
    _model()
    monkeypatch.setenv("PATH", "")
    with pytest.raises(RuntimeError, match="needs Graphviz's `dot` program"):
        viz.render_svg()


def test_networkx_export():
    x, w, _, loss, _ = _model()
    g = viz.to_networkx()
    assert isinstance(g, nx.DiGraph) and g.number_of_nodes() == 11
    assert nx.is_directed_acyclic_graph(g)
    assert g.nodes["dense/w"]["type"] == "VariableV2"
    assert g.nodes["dense/w"]["outputs"] == [("float32", (3, 4))]
    assert g.nodes["dense/w/initial_value"]["attrs"] == {"value": "array float32[3, 4]"}
    assert g.nodes["loss"]["device"] == "/cpu:0"
    assert g.edges["dense/Relu", "Mul"] == {"tensors": [(0, 0), (0, 1)], "control": False}
    assert g.edges["loss", "done"] == {"tensors": [], "control": True}
    sub = viz.to_networkx(fetches=[loss])
    assert "done" not in sub and "dense/w/Assign" not in sub
    assert list(nx.topological_sort(sub))[-1] == "loss"


def test_views_of_a_loaded_model(tmp_path):
    x, w, y, loss, done = _model()
    with tf.Session() as sess:
        sess.run(w.initializer)  # no new op: the file holds every op of the graph
        tf.save(str(tmp_path / "m.gfz"), {"x": x}, {"y": y, "loss": loss, "done": done},
                session=sess)
    model = tf.load(str(tmp_path / "m.gfz"))
    assert viz.summary(model) == viz.summary(tf.get_default_graph())
    assert viz.to_dot(model) == viz.to_dot()
    with pytest.raises(TypeError, match="Expected a Graph"):
        viz.summary("model.gfz")


def test_big_graphs_are_walked_without_recursion():
    x = tf.placeholder(tf.float32, [], name="x")
    y = x
    for _ in range(100_000):
        y = tf.identity(y)
    assert viz.to_networkx(fetches=y).number_of_edges() == 100_000
    assert viz.to_dot(fetches=y).count(" -> ") == 100_000
    assert len(viz.summary().splitlines()) == 100_004
    assert viz.debugprint(y, max_depth=10).count("\n") == 10
    deep = x
    for _ in range(3000):  # deeper than Python's recursion limit; the tree is printed in full
        deep = tf.negative(deep)
    assert viz.debugprint(deep).splitlines()[-1].endswith("Placeholder [id " + viz._ident(3000)
                                                           + "] 'x:0' float32 []")
