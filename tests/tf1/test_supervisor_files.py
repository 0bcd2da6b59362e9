"""The files a Supervisor writes in its logdir, against what TensorFlow 2.21's (tf.compat.v1)
wrote for the same programs: graph.pbtxt, an events file (graph, meta graph, session logs,
summaries) and, with save_model_secs, the checkpoint."""

import os
import warnings

import numpy as np
import pytest
from google.protobuf import text_format

import graphflow as tf
from graphflow.fileformat import tf_protos as pb

pytest.importorskip("tensorboard")
from tensorboard.compat.proto import event_pb2  # noqa: E402

START, STOP, CHECKPOINT = 1, 2, 3


def _events(path):
    out = []
    for record in tf.python_io.tf_record_iterator(path):
        event = event_pb2.Event.FromString(record)
        what = event.WhichOneof("what")
        extra = [v.tag for v in event.summary.value] if what == "summary" else \
            event.session_log.status if what == "session_log" else None
        out.append((what, event.step, extra))
    return out


def _run(logdir, summary=False, **kwargs):
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        step = tf.train.get_or_create_global_step()
        increment = tf.assign_add(step, 1)
        if summary:
            tf.summary.scalar("wv", w)
        sv = tf.train.Supervisor(logdir=str(logdir), **kwargs)
        assert os.listdir(logdir) == []  # created, empty until the session
        with sv.managed_session() as sess:
            assert sorted(os.listdir(logdir))[1] == "graph.pbtxt"
            sess.run(increment)
    files = sorted(os.listdir(logdir))
    (events,) = [f for f in files if f.startswith("events.out.tfevents.")]
    return [f for f in files if f != events], _events(os.path.join(logdir, events))


_HEAD = [("file_version", 0, None), ("graph_def", 0, None), ("meta_graph_def", 0, None),
         ("session_log", 0, START)]


def test_no_summary_op_no_saving_writes_the_graph_and_session_logs(tmp_path):
    files, events = _run(tmp_path, summary_op=None, save_summaries_secs=0, save_model_secs=0)
    assert files == ["graph.pbtxt"]
    assert events == _HEAD + [("session_log", 0, STOP)]
    graph_def = text_format.Parse((tmp_path / "graph.pbtxt").read_text(), pb.GraphDef())
    nodes = {n.name: n for n in graph_def.node}
    assert nodes["w"].op == "VariableV2" and "_output_shapes" in nodes["w"].attr


def test_save_model_secs_adds_the_checkpoint_and_its_session_log(tmp_path):
    files, events = _run(tmp_path, summary_op=None, save_summaries_secs=0, save_model_secs=600)
    assert files == ["checkpoint", "graph.pbtxt", "model.ckpt-1.data-00000-of-00001",
                     "model.ckpt-1.index", "model.ckpt-1.meta"]
    assert events == _HEAD + [("session_log", 1, CHECKPOINT), ("session_log", 0, STOP)]


def test_defaults_write_the_graphs_summaries(tmp_path):
    # TensorFlow's step-counter thread also wrote global_step/sec at step 0 (timing-dependent)
    files, events = _run(tmp_path, summary=True)
    assert "model.ckpt-1.meta" in files and "graph.pbtxt" in files
    assert events == _HEAD + [("summary", 0, ["wv"]), ("session_log", 1, CHECKPOINT),
                              ("session_log", 0, STOP)]
    files, events = _run(tmp_path / "secs0", summary=True, save_summaries_secs=0,
                         save_model_secs=0)
    assert events == _HEAD + [("session_log", 0, STOP)]


def test_ops_without_a_graph_def_form_are_left_out_with_one_warning(tmp_path):
    from graphflow.ops.string_ops import hash_cross
    with tf.Graph().as_default():
        words = tf.constant(np.array([["a"], ["b"]]), name="words")
        cross = hash_cross([words, words], 10, name="cross")
        tf.identity(cross, name="after")
        tf.Variable(1.0, name="w")
        sv = tf.train.Supervisor(logdir=str(tmp_path), summary_op=None, save_model_secs=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with sv.managed_session():
                pass
    messages = [str(w.message) for w in caught if "GraphDef form" in str(w.message)]
    assert len(messages) == 1
    assert "HashCross 'cross'" in messages[0] and "Identity 'after' (reads HashCross" in messages[0]
    graph_def = text_format.Parse((tmp_path / "graph.pbtxt").read_text(), pb.GraphDef())
    names = {n.name for n in graph_def.node}
    assert {"words", "w"} <= names and not {"cross", "after"} & names
    (events,) = [f for f in os.listdir(tmp_path) if f.startswith("events.")]
    kinds = [e[0] for e in _events(str(tmp_path / events))]
    assert kinds == ["file_version", "graph_def", "session_log", "session_log"]
