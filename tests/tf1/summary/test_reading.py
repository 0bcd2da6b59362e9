"""Tests for graphflow/tf1/summary/reading.py (`tf.train.summary_iterator`) and the top-level
summary protos: manual `tf.Summary` values written by a FileWriter, read back by the iterator and
by TensorBoard's EventAccumulator."""

import glob
import os

import pytest

import graphflow as tf

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator",
    reason="tf.summary needs the tensorboard package")


def _events(logdir):
    return [e for path in sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents*")))
            for e in tf.train.summary_iterator(path)]


def _scalars(logdir, tag):
    return [(e.step, v.simple_value) for e in _events(logdir) for v in e.summary.value
            if v.tag == tag]


def test_manual_summaries_round_trip(tmp_path):
    metadata = tf.SummaryMetadata(display_name="the x")
    summary = tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=1.5, metadata=metadata)])
    histo = tf.HistogramProto(min=0.0, max=1.0, num=2, sum=1.0, sum_squares=1.0)
    summary.value.add(tag="h", histo=histo)
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(summary, global_step=7)
    writer.add_summary(summary.SerializeToString(), global_step=8)
    writer.close()
    events = _events(tmp_path)
    assert events[0].HasField("file_version") and isinstance(events[0], tf.Event)
    assert _scalars(tmp_path, "x") == [(7, 1.5), (8, 1.5)]
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    acc.Reload()
    assert [(s.step, s.value) for s in acc.Scalars("x")] == [(7, 1.5), (8, 1.5)]
    assert acc.Tags()["histograms"] == ["h"]


def test_a_corrupted_event_file_is_refused(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=1.0)]), 1)
    writer.close()
    path = glob.glob(os.path.join(str(tmp_path), "events*"))[0]
    data = bytearray(open(path, "rb").read())
    data[-3] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(Exception, match="(?i)crc|corrupt|checksum"):
        list(tf.train.summary_iterator(path))
