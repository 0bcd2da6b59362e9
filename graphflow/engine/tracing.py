"""Run tracing: `tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)` and `tf.RunMetadata`.

With a trace level above NO_TRACE and a `run_metadata`, `Session.run` runs the plan's *traced*
variant (generated like the plain one, with a clock read around each kernel call, compiled on first
use) and fills `run_metadata.step_stats` with TF's StepStats layout: one `DeviceStepStats` per
device holding one `NodeExecStats` per op (node_name, all_start_micros, op_start_rel_micros,
op_end_rel_micros, all_end_rel_micros, timeline_label 'name = Type(inputs)'). The stats describe
the plan as it ran: after the optimizer, a fused op appears once, with its fused type, under the
name of the user's op it ends with. Untraced runs do not touch any of this.
`graphflow.python.client.timeline` turns step stats into a Chrome trace.
"""

import threading
import time

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


class RunOptions:
    """`tf.RunOptions(trace_level=..., timeout_in_ms=0)`."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    TraceLevel = type("TraceLevel", (), {"NO_TRACE": 0, "SOFTWARE_TRACE": 1, "HARDWARE_TRACE": 2,
                                         "FULL_TRACE": 3})

    def __init__(self, trace_level=NO_TRACE, timeout_in_ms=0, output_partition_graphs=False,
                 report_tensor_allocations_upon_oom=False):
        if trace_level not in (0, 1, 2, 3):
            raise ValueError(f"trace_level must be one of RunOptions.NO_TRACE .. FULL_TRACE, "
                             f"got {trace_level!r}")
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms
        self.output_partition_graphs = output_partition_graphs
        self.report_tensor_allocations_upon_oom = report_tensor_allocations_upon_oom

    @property
    def traced(self):
        return self.trace_level != RunOptions.NO_TRACE


class NodeExecStats:
    """One op's execution in a traced run (times in microseconds; `all_start_micros` since the
    epoch, the others relative to it)."""

    __slots__ = ("node_name", "op", "all_start_micros", "op_start_rel_micros",
                 "op_end_rel_micros", "all_end_rel_micros", "timeline_label", "thread_id", "kernel")

    def __init__(self, node_name, op, all_start_micros, duration_micros, timeline_label,
                 thread_id=0, kernel=None):
        self.node_name = node_name
        self.op = op
        self.all_start_micros = all_start_micros
        self.op_start_rel_micros = 0
        self.op_end_rel_micros = duration_micros
        self.all_end_rel_micros = duration_micros
        self.timeline_label = timeline_label
        self.thread_id = thread_id
        # the implementation the plan chose for the op (`kernels/registry.py`: "reference",
        # "numba", "onednn", "cuda", ...); graphflow's addition to TF's fields
        self.kernel = kernel

    def __repr__(self):
        return (f"NodeExecStats({self.node_name!r}, start={self.all_start_micros}, "
                f"duration={self.all_end_rel_micros}us)")


class DeviceStepStats:
    __slots__ = ("device", "node_stats")

    def __init__(self, device, node_stats=None):
        self.device = device
        self.node_stats = list(node_stats or [])


class StepStats:
    """`run_metadata.step_stats`: `dev_stats`, a list of DeviceStepStats."""

    __slots__ = ("dev_stats",)

    def __init__(self, dev_stats=None):
        self.dev_stats = list(dev_stats or [])

    def node_stats(self):
        """Every NodeExecStats of every device, in start order."""
        return sorted((n for d in self.dev_stats for n in d.node_stats),
                      key=lambda n: n.all_start_micros)


class RunMetadata:
    """`tf.RunMetadata()`: filled by a traced `Session.run` (`step_stats`); `plan` is the compiled
    plan the run used (graphflow's own addition, for placement reports)."""

    def __init__(self):
        self.step_stats = StepStats()
        self.plan = None
        self.partition_graphs = []


def timeline_label(op):
    """TF's label 'name = Type(input, input)', which timeline tools parse."""
    return f"{op.name} = {op.type}({', '.join(t.name for t in op.inputs)})"


def _device_name(device):
    if not device or device.lower() in ("/cpu:0", "/device:cpu:0"):
        return CPU_DEVICE
    return f"/job:localhost/replica:0/task:0{device if device.startswith('/device:') else device}"


class Recorder:
    """Collects (step, start, end) clock readings of one traced run and turns them into step
    stats. `clock` is `time.perf_counter`; the readings are mapped onto epoch microseconds."""

    clock = staticmethod(time.perf_counter)

    def __init__(self):
        self.records = []
        self.epoch_micros = time.time_ns() // 1000
        self.origin = time.perf_counter()

    def step_stats(self, traced_ops, device_of, kernel_of=None):
        """The step stats of the recorded steps: `traced_ops[i]` is step i's op, `device_of` and
        `kernel_of` (optional) map an op to its device and to its implementation's name."""
        thread = threading.get_ident() % 1000000
        kernel_of = kernel_of or {}
        by_device = {}
        for index, start, end in self.records:
            op = traced_ops[index]
            device = _device_name(device_of.get(op, ""))
            stats = NodeExecStats(op.name, op.type,
                                  self.epoch_micros + int((start - self.origin) * 1e6),
                                  max(int(round((end - start) * 1e6)), 0), timeline_label(op),
                                  thread, kernel_of.get(op))
            by_device.setdefault(device, DeviceStepStats(device)).node_stats.append(stats)
        return StepStats(list(by_device.values()))


def top_ops(step_stats_list, top=20):
    """[(op type, node name, calls, total micros, mean micros, kernel)] over several runs' step
    stats, largest total first (`kernel`: the implementation that ran the op)."""
    totals = {}
    for step_stats in step_stats_list:
        for node in step_stats.node_stats():
            key = (node.op, node.node_name, node.kernel)
            calls, total = totals.get(key, (0, 0))
            totals[key] = (calls + 1, total + node.all_end_rel_micros)
    rows = [(op, name, calls, total, total / calls, kernel)
            for (op, name, kernel), (calls, total) in totals.items()]
    rows.sort(key=lambda r: (-r[3], r[1]))
    return rows[:top] if top else rows
