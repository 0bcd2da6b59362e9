"""A graph that came from a file runs no op reaching outside the process unless its loader is told
`allow_io=True`: for each loader, a file holding ReadFile of a path outside the model's directory
and WriteFile is refused with every such op listed in one error, nothing read or written; allowed,
it runs; a file without such ops loads as before; a graph the program builds is free."""

import io
import json
import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat.io_policy import IOPolicyError, reaching_ops
from graphflow.interop.tensorflow.graph_io import load_graph_def, write_graph
from graphflow.ops import registry
from graphflow.tools import cli

SECRET = b"the contents of a file outside the model's directory"


@pytest.fixture
def outside(tmp_path):
    """(secret path, path a hostile graph writes): both outside the model's directory."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_bytes(SECRET)
    (tmp_path / "model").mkdir()
    return str(folder / "secret.txt"), str(folder / "dropped.txt")


def _hostile(outside):
    """x -> y = 2x, which first reads the secret and writes it elsewhere; `data` its bytes."""
    secret, dropped = outside
    x = tf.placeholder(tf.float32, [], name="x")
    data = tf.read_file(secret, name="steal")
    write = tf.write_file(dropped, data, name="drop")
    with tf.control_dependencies([write]):
        y = tf.identity(x * 2.0, name="y")
    return x, y, data


def _refused(excinfo, how, count=2):
    text = str(excinfo.value)
    assert "ReadFile 'steal' (files)" in text and "WriteFile 'drop' (files)" in text, text
    assert f"holds {count} op(s)" in text and how in text, text


def _save_hostile(tmp_path, outside):
    path = str(tmp_path / "model" / "m.gfz")
    with tf.Graph().as_default():
        x, y, data = _hostile(outside)
        tf.save(path, inputs={"x": x}, outputs={"y": y, "data": data})
    return path


# ------------------------------------------------------------------ graphflow's files
def test_load_refuses_a_file_reaching_outside_and_allow_io_runs_it(tmp_path, outside):
    path = _save_hostile(tmp_path, outside)
    with pytest.raises(IOPolicyError) as excinfo:
        tf.load(path)
    _refused(excinfo, "graphflow.load(path, allow_io=True)")
    assert isinstance(excinfo.value, PermissionError) and not os.path.exists(outside[1])
    with tf.load(path, allow_io=True) as model:
        out = model.run({"x": 1.5})
    assert out["y"] == 3.0 and out["data"] == SECRET
    assert open(outside[1], "rb").read() == SECRET


def test_import_graph_refuses_before_touching_the_graph(tmp_path, outside):
    path = _save_hostile(tmp_path, outside)
    loaded = tf.load(path, allow_io=True)
    for source in (path, loaded):
        graph = tf.Graph()
        with pytest.raises(IOPolicyError) as excinfo:
            tf.import_graph(source, graph=graph)
        _refused(excinfo, "graphflow.import_graph(source, allow_io=True)")
        assert graph.num_ops() == 0
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        imported = tf.import_graph(path, prefix="m", allow_io=True)
        assert sess.run(imported.outputs["data"]) == SECRET


def test_files_without_such_ops_load_as_before(tmp_path):
    path = str(tmp_path / "clean.gfz")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.print("y is", x)  # to the standard error stream: reaches nothing outside
        with tf.control_dependencies([y]):
            z = tf.identity(x * 3.0, name="z")
        tf.save(path, inputs={"x": x}, outputs={"z": z})
    with tf.load(path) as model:
        assert model.run({"x": [1.0, 2.0]})["z"].tolist() == [3.0, 6.0]
    with tf.Graph().as_default():
        assert tf.import_graph(path, prefix="m").outputs["z"].name == "m/z:0"


def test_a_graph_the_program_builds_is_free(outside):
    with tf.Graph().as_default(), tf.Session() as sess:
        x, y, data = _hostile(outside)
        assert sess.run([y, data], {x: 2.0}) == [4.0, SECRET]
    assert os.path.exists(outside[1])


def test_function_bodies_and_print_to_a_file_are_checked(tmp_path, outside):
    path = str(tmp_path / "model" / "cond.gfz")
    log = str(tmp_path / "outside" / "log.txt")
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [], name="flag")
        out = tf.cond(flag, lambda: tf.read_file(outside[0]), lambda: tf.constant(b""),
                      name="pick")
        printed = tf.print("seen", output_stream=f"file://{log}", name="log")
        tf.save(path, inputs={"flag": flag}, outputs={"out": out, "log": printed})
    with pytest.raises(IOPolicyError) as excinfo:
        tf.load(path)
    text = str(excinfo.value)
    assert "PrintV2 'log' (files)" in text and "ReadFile 'pick/If/then_branch/ReadFile'" in text, \
        text
    with tf.load(path, allow_io=True) as model:
        assert model.run({"flag": True})["out"] == SECRET
    assert open(log).read() == "seen\n"


def test_reaching_ops_walks_nested_functions():
    with tf.Graph().as_default() as graph:
        flag = tf.placeholder(tf.bool, [])
        tf.cond(flag, lambda: tf.cond(flag, lambda: tf.read_file("a"), lambda: tf.read_file("b")),
                lambda: tf.constant(b""), name="outer")
    found = reaching_ops(graph.get_operations())
    assert sorted(t for t, _, _ in found) == ["ReadFile", "ReadFile"]
    assert sorted(name for _, name, _ in found) == [
        "outer/If/then_branch/cond/If/else_branch/ReadFile",
        "outer/If/then_branch/cond/If/then_branch/ReadFile"]


# ------------------------------------------------------------------ TensorFlow's files
def test_import_meta_graph_refuses_and_allows(tmp_path, outside):
    prefix = str(tmp_path / "model" / "ckpt")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, y, data = _hostile(outside)
        v = tf.Variable(1.0, name="v")
        sess.run(tf.global_variables_initializer())
        tf.train.Saver([v]).save(sess, prefix)
    with tf.Graph().as_default() as graph:
        with pytest.raises(IOPolicyError) as excinfo:
            tf.train.import_meta_graph(prefix + ".meta")
        _refused(excinfo, "tf.train.import_meta_graph(path, allow_io=True)")
        assert graph.num_ops() == 0
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta", allow_io=True)
        saver.restore(sess, prefix)
        assert sess.run(["y:0", "steal:0"], {"x:0": 1.0}) == [2.0, SECRET]
    assert os.path.exists(outside[1])
    old = str(tmp_path / "model" / "old.meta")  # a graphflow file under a .meta name
    with tf.Graph().as_default():
        _hostile(outside)
        tf.save(old)
    with tf.Graph().as_default():
        with pytest.raises(IOPolicyError) as excinfo:
            tf.train.import_meta_graph(old)
        _refused(excinfo, "tf.train.import_meta_graph(path, allow_io=True)")


def _graph_def_reading(path):
    """A GraphDef written by hand: ReadFile of a constant path, WriteFile of its bytes."""
    graph_def = pb.GraphDef()

    def node(name, op, inputs=(), **attrs):
        n = graph_def.node.add(name=name, op=op, input=list(inputs))
        for key, value in attrs.items():
            n.attr[key].CopyFrom(value)
        return n

    def const(name, text):
        value = pb.AttrValue()
        value.tensor.dtype = pb.DataType.DT_STRING
        value.tensor.string_val.append(text.encode())
        node(name, "Const", value=value, dtype=pb.AttrValue(type=pb.DataType.DT_STRING))

    const("path", path[0])
    const("target", path[1])
    node("steal", "ReadFile", ["path"])
    node("drop", "WriteFile", ["target", "steal"])
    return graph_def


def test_import_graph_def_and_load_graph_def_refuse_and_allow(tmp_path, outside):
    graph_def = _graph_def_reading(outside)
    with tf.Graph().as_default() as graph:
        with pytest.raises(IOPolicyError) as excinfo:
            tf.import_graph_def(graph_def, name="")
        _refused(excinfo, "tf.import_graph_def(graph_def, allow_io=True)")
        assert graph.num_ops() == 0
    path = write_graph(graph_def, str(tmp_path / "model"), "g.pb", as_text=False)
    with tf.Graph().as_default():
        with pytest.raises(IOPolicyError) as excinfo:
            load_graph_def(path)
        _refused(excinfo, "load_graph_def(path, allow_io=True)")
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(graph_def, name="", allow_io=True)
        assert sess.run("steal:0") == SECRET
        sess.run("drop")
    assert open(outside[1], "rb").read() == SECRET


def _saved_model(tmp_path, outside):
    export_dir = str(tmp_path / "model" / "export")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, y, data = _hostile(outside)
        v = tf.Variable(1.0, name="v")
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        # its init op writes the file too: a refused load must not run it
        builder.add_meta_graph_and_variables(
            sess, ["serve"], {"serving_default": tf.saved_model.predict_signature_def(
                {"x": x}, {"y": y * v, "data": data})},
            main_op=tf.group(tf.write_file(outside[1] + ".init", data, name="drop_init")))
        builder.save()
    return export_dir


def test_saved_model_loader_refuses_before_its_init_op_runs(tmp_path, outside):
    export_dir = _saved_model(tmp_path, outside)
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(IOPolicyError) as excinfo:
            tf.saved_model.loader.load(sess, ["serve"], export_dir)
        _refused(excinfo, "tf.saved_model.loader.load(sess, tags, export_dir, allow_io=True)",
                 count=3)
        assert "WriteFile 'drop_init' (files)" in str(excinfo.value)
    assert not os.path.exists(outside[1] + ".init")
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir, allow_io=True)
        sig = meta.signature_def["serving_default"]
        assert sess.run(sig.outputs["data"].name) == SECRET
    assert open(outside[1] + ".init", "rb").read() == SECRET


def test_saved_model_of_an_older_graphflow_layout(tmp_path, outside):
    export_dir = str(tmp_path / "model" / "old")
    os.makedirs(export_dir)
    with tf.Graph().as_default():
        x, y, data = _hostile(outside)
        tf.save(os.path.join(export_dir, "saved_model.gfz"))
    entry = {"name": "steal:0", "dtype": "string", "shape": []}
    with open(os.path.join(export_dir, "saved_model.json"), "w") as f:
        json.dump({"format": "graphflow-saved-model", "version": 1, "meta_graphs": [{
            "tags": ["serve"], "signature_def": {"serving_default": {
                "inputs": {}, "outputs": {"data": entry}, "method_name": "predict"}}}]}, f)
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(IOPolicyError) as excinfo:
            tf.saved_model.loader.load(sess, ["serve"], export_dir)
        _refused(excinfo, "tf.saved_model.loader.load(sess, tags, export_dir, allow_io=True)")
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir, allow_io=True)
        assert sess.run("steal:0") == SECRET


# ------------------------------------------------------------------ ONNX
def test_onnx_import_passes_its_ops_through_the_policy(monkeypatch):
    """ONNX has no op reaching outside the process; were one built, the importer would refuse it."""
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    from graphflow.interop.onnx import import_model
    assert import_model(model).run({"x": np.float32([-1, 2])})["y"].tolist() == [0.0, 2.0]
    monkeypatch.setattr(registry.lookup("Relu"), "touches", "files")
    with pytest.raises(IOPolicyError, match=r"Relu '.*' \(files\)"):
        import_model(model)
    assert import_model(model, allow_io=True) is not None


# ------------------------------------------------------------------ the graphflow command
def _cli(*argv):
    out = io.StringIO()
    return cli.main(list(argv), out=out), out.getvalue()


def test_cli_run_refuses_unless_allow_io_and_inspect_lists(tmp_path, outside, capsys):
    path = _save_hostile(tmp_path, outside)
    status, _ = _cli("run", path, "--input", "x=1.0")
    err = capsys.readouterr().err
    assert status == 2 and "ReadFile 'steal' (files)" in err and "WriteFile 'drop'" in err, err
    assert "--allow-io" in err and not os.path.exists(outside[1])
    status, text = _cli("inspect", path, "--brief")
    assert status == 0 and "ops reaching outside the process (2;" in text, text
    assert "ReadFile 'steal' (files)" in text and not os.path.exists(outside[1])
    status, text = _cli("run", path, "--input", "x=1.0", "--allow-io")
    assert status == 0 and "y: float32" in text and os.path.exists(outside[1]), text


def test_cli_on_tensorflow_files(tmp_path, outside, capsys):
    export_dir = _saved_model(tmp_path, outside)
    graph_def = write_graph(_graph_def_reading(outside), str(tmp_path / "model"), "g.pb",
                            as_text=False)
    for path in (export_dir, graph_def):
        status, _ = _cli("run", path, "--input", "x=1.0")
        err = capsys.readouterr().err
        assert status == 2 and "ReadFile 'steal' (files)" in err and "--allow-io" in err, err
    status, text = _cli("inspect", export_dir, "--brief")
    assert status == 0 and "WriteFile 'drop_init' (files)" in text, text
    assert not os.path.exists(outside[1] + ".init")  # inspect runs no init op
    status, text = _cli("run", graph_def, "--outputs", "steal", "--allow-io")
    assert status == 0 and "steal" in text, text
