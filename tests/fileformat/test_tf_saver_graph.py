"""The save/restore subgraph: written as TensorFlow's Saver writes it (compared with the `.meta`
TensorFlow wrote for the fixture), and split off TensorFlow's graphs (sharded or not) on import
with the checkpoint key of each variable read back. Also: reading hostile protobuf bytes and
asset names that try to leave a SavedModel directory."""

import os
import pathlib

import pytest

from graphflow.fileformat import tf_meta_graph as mg
from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat import tf_saved_model as sm
from graphflow.fileformat import tf_saver_graph as saver_graph
from graphflow.framework.errors import GraphFormatError

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "tensorflow"
META = FIXTURES / "meta" / "mlp-20.meta"
SAVED_MODEL = FIXTURES / "saved_model" / "two_heads"


def _tf_meta():
    return mg.read_meta_graph_file(META)


def test_saver_nodes_match_tensorflows():
    meta = _tf_meta()
    tf_nodes = [n for n in meta.graph_def.node if n.name.startswith("save/")]
    variables = []
    by_name = {n.name: n for n in meta.graph_def.node}
    for n in by_name.values():
        if n.op == "VariableV2":
            dtype = {pb.DataType.Value("DT_FLOAT"): "float32",
                     pb.DataType.Value("DT_INT64"): "int64"}[n.attr["dtype"].type]
            shape = [d.size for d in n.attr["shape"].shape.dim]
            variables.append((n.name, n.name, dtype, shape))
    nodes, saver_def = saver_graph.saver_nodes(variables, max_to_keep=2)
    assert saver_def == meta.saver_def
    assert [(n.name, n.op, list(n.input)) for n in nodes] == \
        [(n.name, n.op, list(n.input)) for n in tf_nodes]
    for mine, theirs in zip(nodes, tf_nodes):
        if mine.op == "Const":
            assert mine.attr["value"] == theirs.attr["value"], mine.name
        if mine.op in ("SaveV2", "RestoreV2"):
            assert mine.attr["dtypes"] == theirs.attr["dtypes"]
        if mine.op == "Assign":
            assert mine.attr["T"] == theirs.attr["T"]
            assert mine.attr["validate_shape"] == theirs.attr["validate_shape"]


def test_split_and_restore_keys_of_a_plain_saver():
    meta = _tf_meta()
    kept, removed = saver_graph.split_saver_nodes(list(meta.graph_def.node), meta.saver_def)
    assert removed and all(n.name.startswith("save/") for n in removed)
    assert not any(n.name.startswith("save/") for n in kept)
    keys = saver_graph.restore_keys(removed)
    assert keys["hidden/kernel"] == "hidden/kernel"
    assert keys["global_step"] == "global_step"
    assert len(keys) == len([n for n in kept if n.op == "VariableV2"])


def test_split_a_sharded_saver_of_a_saved_model():
    meta = sm.read_saved_model(SAVED_MODEL).meta_graphs[0]
    assert meta.saver_def.sharded
    kept, removed = saver_graph.split_saver_nodes(list(meta.graph_def.node), meta.saver_def)
    assert {n.op for n in removed} >= {"ShardedFilename", "MergeV2Checkpoints", "RestoreV2"}
    assert len(saver_graph.restore_keys(removed)) == 7
    # with no SaverDef, the scopes holding SaveV2/RestoreV2 are found
    kept2, removed2 = saver_graph.split_saver_nodes(list(meta.graph_def.node))
    assert [n.name for n in kept2] == [n.name for n in kept]


def test_unique_scope():
    assert saver_graph.unique_scope({"x", "y"}) == "save"
    assert saver_graph.unique_scope({"save/Const", "save_1"}) == "save_2"


@pytest.mark.parametrize("data", [b"\xff" * 40, b"\x0a\xff\xff\xff\xff\x0f", b"not { a proto",
                                  b"graph_def { node { name: " + b"{" * 5000])
def test_hostile_bytes_are_graph_format_errors(tmp_path, data):
    path = tmp_path / "bad.meta"
    path.write_bytes(data)
    with pytest.raises(GraphFormatError, match="bad.meta"):
        mg.read_meta_graph_file(path)


def test_size_is_checked_before_reading(tmp_path):
    path = tmp_path / "big.meta"
    path.write_bytes(META.read_bytes())
    with pytest.raises(GraphFormatError, match="more than the limit"):
        mg.read_meta_graph_file(path, max_bytes=1000)


def test_text_format_meta_graph(tmp_path):
    from google.protobuf import text_format
    path = tmp_path / "text.meta"
    path.write_text(text_format.MessageToString(_tf_meta()))
    assert mg.read_meta_graph_file(path) == _tf_meta()


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "a/../../b", "..", "",
                                  "C:\\x", "a\0b", "..\\..\\x"])
def test_asset_names_may_not_leave_the_directory(tmp_path, name):
    (tmp_path / "assets").mkdir()
    with pytest.raises(GraphFormatError, match="asset"):
        sm.asset_path(str(tmp_path), name, "SavedModel")


def test_asset_symlinks_may_not_leave_the_directory(tmp_path):
    (tmp_path / "assets").mkdir()
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    secret.write_text("secret")
    os.symlink(secret, tmp_path / "assets" / "vocab.txt")
    with pytest.raises(GraphFormatError, match="leads out"):
        sm.asset_path(str(tmp_path), "vocab.txt", "SavedModel")
    (tmp_path / "assets" / "ok.txt").write_text("fine")
    assert sm.asset_path(str(tmp_path), "ok.txt", "x").endswith("ok.txt")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "v.txt").write_text("v")
    other = tmp_path.parent / f"{tmp_path.name}-other"
    other.mkdir()
    os.symlink(outside, other / "assets")
    with pytest.raises(GraphFormatError, match="leads out"):
        sm.asset_path(str(other), "v.txt", "SavedModel")
