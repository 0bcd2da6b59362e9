"""tf.summary.FileWriter: event files read back with TensorBoard's own EventAccumulator (values,
steps, histogram buckets, image sizes, text, the graph), flush/close/reopen and FileWriterCache."""

import os

import numpy as np
import pytest

import graphflow as tf

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator",
    reason="tf.summary needs the tensorboard package")


def _read(logdir):
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"images": 0, "scalars": 0,
                                                                         "histograms": 0})
    acc.Reload()
    return acc


def _model():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.variable_scope("dense"):
        w = tf.get_variable("kernel", initializer=np.linspace(-1, 1, 8, dtype=np.float32)
                            .reshape(4, 2))
        y = tf.matmul(x, w, name="logits")
    loss = tf.reduce_mean(tf.square(y), name="loss_value")
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("dense_kernel", w)
    tf.summary.image("inputs", tf.reshape(x, [-1, 2, 2, 1]), max_outputs=2)
    tf.summary.text("note", tf.constant("step **done**"))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, loss, train


def test_events_read_back_with_tensorboards_reader(tmp_path):
    x, loss, train = _model()
    merged = tf.summary.merge_all()
    data = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        writer = tf.summary.FileWriter(str(tmp_path / "run"), sess.graph, flush_secs=1)
        assert writer.get_logdir() == str(tmp_path / "run")
        for step in range(0, 30, 10):
            summary, value, _ = sess.run([merged, loss, train], {x: data})
            writer.add_summary(summary, global_step=step)
            losses.append(value)
        writer.close()
    acc = _read(tmp_path / "run")
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"] and tags["histograms"] == ["dense_kernel"]
    assert tags["images"] == ["inputs/image/0", "inputs/image/1"] and tags["tensors"] == ["note"]
    scalars = acc.Scalars("loss")
    assert [e.step for e in scalars] == [0, 10, 20]
    np.testing.assert_allclose([e.value for e in scalars], losses, rtol=1e-6)
    histo = acc.Histograms("dense_kernel")[0].histogram_value
    assert (histo.num, histo.min, histo.max) == (8, -1, 1) and sum(histo.bucket) == 8
    assert len(histo.bucket_limit) == len(histo.bucket) > 2
    images = acc.Images("inputs/image/1")
    assert [(i.width, i.height, i.step) for i in images] == [(2, 2, 0), (2, 2, 10), (2, 2, 20)]
    text = acc.Tensors("note")[0].tensor_proto
    assert list(text.string_val) == [b"step **done**"]
    graph = acc.Graph()
    assert len(graph.node) == len(tf.get_default_graph().get_operations())


def test_graph_def_names_inputs_devices_attrs_and_shapes(tmp_path):
    x, loss, _ = _model()
    with tf.device("/cpu:0"):
        extra = tf.identity(loss, name="on_cpu")
    with tf.control_dependencies([extra]):
        tf.no_op(name="after")
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_graph(tf.get_default_graph())
    nodes = {n.name: n for n in _read(tmp_path).Graph().node}
    logits = nodes["dense/logits"]
    assert logits.op == "MatMul" and list(logits.input) == ["x", "dense/kernel"]
    assert [d.size for d in logits.attr["_output_shapes"].list.shape[0].dim] == [-1, 2]
    assert nodes["on_cpu"].device.lower().endswith("cpu:0")
    assert list(nodes["after"].input) == ["^on_cpu"]
    assert nodes["x"].attr["dtype"].s == b"float32"
    assert nodes["loss"].op == "ScalarSummary" and nodes["loss"].attr["tag"].s == b"loss"


def test_add_summary_accepts_protos_and_rejects_other_values(tmp_path):
    from tensorboard.compat.proto import summary_pb2
    writer = tf.summary.FileWriter(str(tmp_path))
    proto = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="manual", simple_value=3.5)])
    writer.add_summary(proto, 7)
    writer.add_summary(proto.SerializeToString(), 8)
    with pytest.raises(TypeError, match="serialized Summary"):
        writer.add_summary(3.5, 9)
    writer.flush()
    assert [(e.step, e.value) for e in _read(tmp_path).Scalars("manual")] == [(7, 3.5), (8, 3.5)]
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.add_summary(proto, 10)
    writer.reopen()
    writer.add_summary(proto, 11)
    writer.close()
    assert len(os.listdir(tmp_path)) == 2  # reopen starts a second event file
    # in time order: two event files named within one second sort by TensorBoard's per-process
    # writer counter as text ("...10" before "...9"), so the reader's file order is not the time's
    events = sorted(_read(tmp_path).Scalars("manual"), key=lambda e: e.wall_time)
    assert [e.step for e in events] == [7, 8, 11]


def test_file_writer_cache_shares_one_writer_per_logdir(tmp_path):
    a = tf.summary.FileWriterCache.get(str(tmp_path / "a"))
    assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is a
    assert tf.summary.FileWriterCache.get(str(tmp_path / "b")) is not a
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is not a
    tf.summary.FileWriterCache.clear()


def test_summary_proto_classes_and_run_metadata(tmp_path):
    x = tf.placeholder(tf.float32, [3])
    y = tf.reduce_sum(tf.square(x, name="square"), name="total")
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, {x: [1, 2, 3]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=meta)
    custom = tf.summary.Summary(value=[tf.summary.Summary.Value(tag="lr", simple_value=0.5)])
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(custom, 1)
        writer.add_run_metadata(meta, "step1", global_step=1)
    acc = _read(tmp_path)
    assert acc.Tags()["run_metadata"] == ["step1"] and acc.Scalars("lr")[0].value == 0.5
    stats = acc.RunMetadata("step1").step_stats.dev_stats[0].node_stats
    assert [n.node_name for n in stats] == ["square", "total"]
    with pytest.raises(AttributeError, match="does not implement tf.summary.Nothing"):
        _ = tf.summary.Nothing
