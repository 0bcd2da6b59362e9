"""The `touches` fact of the op records: what an op reaches outside the process's memory when it
runs. The reviewed list below must match the registry, and every CPU kernel whose module opens
files, names paths, talks to other processes or calls the process's Python code belongs to an op
type this file has reviewed (a new kernel there fails until its op says what it reaches)."""

import inspect
import re
import sys

import pytest

import graphflow  # noqa: F401 - registers every op type
from graphflow.kernels.cpu import TABLE
from graphflow.ops import registry

# op type -> what its kernel reaches (reviewed against the kernels)
TOUCHING = {
    "ReadFile": "files",                    # open(path, "rb")
    "WriteFile": "files",                   # os.makedirs + open(path, "wb")
    "WholeFileReaderV2": "files",           # the reader resource opens its queue's file names
    "TextLineReaderV2": "files",
    "FixedLengthRecordReaderV2": "files",
    "TFRecordReaderV2": "files",
    "ReaderReadV2": "files",                # ... when a read op asks for the next record
    "ReaderReadUpToV2": "files",
    "PyFunc": "python",                     # calls the process's function registered by token
    "MpiAllreduce": "network",              # every collective exchanges values with other ranks
    "MpiAllgather": "network",
    "MpiBroadcast": "network",
    "MpiAllreduceStart": "network",
    "MpiAllreduceWait": "network",
    "MpiAllgatherGrad": "network",
}
# op types whose reach depends on their attrs: (attrs, expected kind)
BY_ATTRS = {
    "PrintV2": [({"output_stream": "file:///tmp/log.txt"}, "files"),
                ({"output_stream": "stderr"}, ""), ({"output_stream": "stdout"}, "")],
}
# kernels in modules that reach outside, reviewed as reaching nothing themselves
REACHES_NOTHING = {
    "DecodeBmp", "DecodeGif", "DecodeImage", "DecodeJpeg", "DecodePng",  # decode bytes in memory
    "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2",  # counters of the resource
    "ReaderResetV2",                        # forgets the current file, opens none
    "Print", "Assert", "CheckNumerics",     # the standard error stream, or an error
    # tf.data iterators: they run a pipeline of this process named by a random 128-bit token
    # (`data_ops.register_dataset`), which a file cannot know; loaded, they find none and fail
    "MakeIterator", "IteratorGetNext",
}
REACHING_SOURCE = re.compile(
    r"(?<![\w.])open\(|\bos\.(makedirs|remove|rename|replace|unlink|mkdir|listdir|scandir|walk)\b"
    r"|\bsocket\b|\bsubprocess\b|\burllib\b|\bglob\b|\bshutil\b|mpi_runtime|\bFUNCTIONS\b"
    r"|\bDATASETS\b|lookup_dataset")


def test_the_reviewed_list_matches_the_registry():
    declared = {t: d.touches for t, d in registry._REGISTRY.items() if d.touches}
    fixed = {t: kind for t, kind in declared.items() if not callable(kind)}
    assert fixed == TOUCHING
    assert sorted(t for t, kind in declared.items() if callable(kind)) == sorted(BY_ATTRS)
    for op_type, examples in BY_ATTRS.items():
        for attrs, kind in examples:
            assert registry.lookup(op_type).touches_of(attrs) == kind, (op_type, attrs)


def test_every_kernel_module_reaching_outside_is_reviewed():
    """A CPU kernel registered from a module that opens files, names paths, spawns, connects or
    calls registered Python functions runs an op type reviewed above."""
    unreviewed = {}
    for op_type in TABLE.op_types():
        for impl in TABLE.implementations(op_type):
            module = sys.modules[impl.build.__module__]
            if REACHING_SOURCE.search(inspect.getsource(module)) and op_type not in TOUCHING \
                    and op_type not in BY_ATTRS and op_type not in REACHES_NOTHING:
                unreviewed.setdefault(module.__name__, []).append(op_type)
    assert not unreviewed, (f"kernels in modules reaching outside the process, whose ops declare "
                            f"no `touches` and are not reviewed here: {unreviewed}")
    stale = REACHES_NOTHING - set(TABLE.op_types())
    assert not stale, f"reviewed op types with no kernel: {stale}"


def test_ops_that_reach_outside_are_stateful():
    """Never folded or merged: no pass runs them while optimizing, so `graphflow optimize` and
    `inspect` may import them without running them."""
    for op_type in list(TOUCHING) + list(BY_ATTRS):
        assert registry.lookup(op_type).stateful, op_type


def test_touches_takes_its_vocabulary_or_a_rule():
    with pytest.raises(ValueError, match="touches must be one of"):
        registry.OpDef("Bogus", lambda inputs, attrs: [], touches="disk")
    op_def = registry.OpDef("Bogus", lambda inputs, attrs: [], touches=lambda attrs: "disk")
    with pytest.raises(ValueError, match="its touches rule gave 'disk'"):
        op_def.touches_of({})
    assert registry.OpDef("Plain", lambda inputs, attrs: []).touches_of({}) == ""
