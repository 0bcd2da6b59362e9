"""Timeline: a traced run as Chrome Trace Event JSON (the format chrome://tracing and Perfetto
load), reachable as graphflow.timeline and graphflow.python.client.timeline."""

import json

import numpy as np

import graphflow as tf
import graphflow.python.client.timeline as client_timeline


def _traced_run():
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.Variable(np.ones([3, 2], np.float32), name="w")
    y = tf.nn.relu(tf.matmul(x, w, name="matmul"), name="relu")
    loss = tf.reduce_mean(y, name="loss")
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(loss, {x: np.ones([4, 3])},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    return meta


def test_chrome_trace_is_valid_trace_event_json():
    meta = _traced_run()
    trace = json.loads(tf.timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    for event in events:  # the Trace Event Format's required fields per phase
        assert event["ph"] in ("M", "X", "s", "t") and isinstance(event["pid"], int)
        if event["ph"] != "M":
            assert isinstance(event["ts"], int) and isinstance(event["tid"], int)
            assert isinstance(event["name"], str) and isinstance(event["cat"], str)
    (process,) = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert process["args"]["name"].endswith("device:CPU:0 Compute")
    ops = [e for e in events if e["ph"] == "X"]
    assert [(e["name"], e["args"]["name"]) for e in ops] == [
        ("VariableV2", "w"), ("MatMul", "matmul"), ("Relu", "relu"), ("Mean", "loss")]
    assert all(e["dur"] >= 0 for e in ops)
    assert ops[1]["args"]["input0"] == "x:0" and ops[1]["args"]["input1"] == "w:0"
    starts = {e["args"]["name"]: e["ts"] for e in ops}
    flows = [e for e in events if e["ph"] in ("s", "t")]
    pairs = {}
    for e in flows:
        pairs.setdefault(e["id"], {})[e["ph"]] = e
    assert len(pairs) == 3  # w -> matmul, matmul -> relu, relu -> loss
    for pair in pairs.values():
        assert pair["s"]["ts"] <= pair["t"]["ts"] and pair["t"]["ts"] in starts.values()


def test_import_paths_and_no_dataflow():
    meta = _traced_run()
    assert client_timeline.Timeline is tf.timeline.Timeline is tf.python.client.timeline.Timeline
    trace = json.loads(client_timeline.Timeline(meta.step_stats)
                       .generate_chrome_trace_format(show_dataflow=False))
    assert {e["ph"] for e in trace["traceEvents"]} == {"M", "X"}
