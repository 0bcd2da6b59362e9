"""`Timeline(step_stats).generate_chrome_trace_format()`: a traced run as Chrome Trace Event JSON,
which chrome://tracing and Perfetto (ui.perfetto.dev) open.

    run_metadata = tf.RunMetadata()
    sess.run(train_op, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format()

As TF1's `tensorflow.python.client.timeline`: one process per device ('<device> Compute'), one
complete event ('ph': 'X') per op named by its type with the node name and inputs as args, and
with `show_dataflow` a flow arrow ('ph': 's'/'t') from each producer op to each consumer.
"""

import json
import re

_LABEL = re.compile(r"^(.*?) = (.*?)\((.*)\)$")


__all__ = ["Timeline"]


def _parse_label(label, node_name):
    """(op type, [input names]) from a 'name = Type(a, b)' timeline label."""
    match = _LABEL.match(label or "")
    if not match:
        return "unknown", []
    inputs = [x.strip() for x in match.group(3).split(",") if x.strip()]
    return match.group(2), inputs


class Timeline:
    """`Timeline(step_stats, graph=None)`."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def _events(self, show_dataflow):
        events = []
        producers = {}   # node name -> (pid, tid, end micros)
        consumers = []   # (input node name, pid, tid, start micros)
        for pid, dev_stats in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": f"{dev_stats.device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": pid}})
            for node in dev_stats.node_stats:
                op_type, inputs = _parse_label(node.timeline_label, node.node_name)
                start, duration = int(node.all_start_micros), int(node.all_end_rel_micros)
                tid = int(getattr(node, "thread_id", 0) or 0)
                args = {"name": node.node_name, "op": op_type}
                args.update({f"input{i}": name for i, name in enumerate(inputs)})
                events.append({"name": op_type, "cat": "Op", "ph": "X", "pid": pid, "tid": tid,
                               "ts": start, "dur": duration, "args": args})
                producers[node.node_name] = (pid, tid, start + duration)
                consumers.extend((name.split(":")[0].lstrip("^"), pid, tid, start)
                                 for name in inputs)
        if show_dataflow:
            flow_id = 0
            for source, pid, tid, start in consumers:
                produced = producers.get(source)
                if produced is None:
                    continue
                src_pid, src_tid, end = produced
                common = {"name": "DataFlow", "cat": "DataFlow", "id": flow_id}
                events.append({**common, "ph": "s", "pid": src_pid, "tid": src_tid,
                               "ts": min(end, start)})
                events.append({**common, "ph": "t", "bp": "e", "pid": pid, "tid": tid,
                               "ts": start})
                flow_id += 1
        return events

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string {'traceEvents': [...], 'displayTimeUnit': 'ns'}.
        `show_memory` is accepted for TF1 compatibility (graphflow does not trace allocations)."""
        return json.dumps({"traceEvents": self._events(show_dataflow),
                           "displayTimeUnit": "ns"}, indent=1)
