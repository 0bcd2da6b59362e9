"""graphflow.save / load / import_graph: round trips over every registered op type (bit-identical
results), a fresh interpreter that never imports the building code, import with prefixes and
input maps, variables and collections, atomic writes. Hostile files: tests/test_graph_decoder.py and
tests/test_file_io.py."""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat.serialization import subgraph_ops
from graphflow.framework.func_graph import FuncGraph
from graphflow.ops import registry
from graphflow.ops.gradients import dense_gradients
from tests.op_cases import all_cases

# ops that cannot travel in a file (tf.data iterators, py_func) are tested in their own modules
CASES = [c for c in all_cases() if not registry.lookup(c.op_type).unsaveable
         and not registry.lookup(c.op_type).cannot_save]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _assert_bit_identical(got, want, what):
    if want is None:
        assert got is None, what
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}")
    if want.dtype == object:  # tf.string: compare the bytes objects, not their addresses
        assert got.tolist() == want.tolist(), f"{what}: strings differ after the round trip"
        return
    assert got.tobytes() == want.tobytes(), f"{what}: values differ after the round trip"


# ---------------------------------------------------------------------- graphs to round-trip
# Each builder adds ops to the default graph and returns (feeds {name: (tensor, value)},
# outputs {name: Tensor/Operation}, run_initializers). Every registered op type must appear in
# at least one of them (test_every_registered_op_type_is_round_tripped).
def _case_builder(case, gradients):
    def build():
        tf.set_random_seed(1234)  # random ops replay the same draws in the loaded session
        phs = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape, name=f"in{i}")
               for i, x in enumerate(case.inputs)]
        outs = _as_list(case.build(*phs))
        floats = [o for o in outs if o.dtype.is_floating]
        if gradients and floats:
            total = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float64)) for o in floats])
            grads = dense_gradients(total, [phs[i] for i in _diff_positions(case)])
            outs = [g for g in grads if g is not None]
        feeds = {f"in{i}": (p, v) for i, (p, v) in enumerate(zip(phs, case.inputs))}
        return feeds, {f"out{i}": o for i, o in enumerate(outs)}, False
    return build


def _diff_positions(case):
    if case.grad_inputs is not None:
        return list(case.grad_inputs)
    return [i for i, x in enumerate(case.inputs) if x.dtype.kind == "f"]


def _variables_graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.name_scope("layer"):
        w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), name="w")
        b = tf.Variable(np.full([4], 0.5, np.float32), name="b")
        y = tf.nn.relu(tf.matmul(x, w) + b)
    counter = tf.Variable(0, name="counter", trainable=False)
    with tf.control_dependencies([tf.assign_add(counter, 1)]):
        step = tf.group(tf.assign(b, b * 2.0), tf.assign_sub(w, w * 0.5),
                        tf.scatter_update(b, [1], [3.0]), tf.scatter_add(w, [0, 0], tf.ones([2, 4])),
                        tf.scatter_sub(w, [2], tf.ones([1, 4])), name="step")
    return ({"x": (x, np.arange(6, dtype=np.float32).reshape(2, 3) - 2)},
            {"y": y, "step": step, "count": counter.read_value(),
             "ready": tf.is_variable_initialized(w)}, True)


def _training_graph(optimizer):
    def build():
        x = tf.placeholder(tf.float64, [4, 2], name="x")
        w = tf.Variable(np.array([[0.5], [-0.25]]), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
        train = optimizer().minimize(loss, global_step=tf.train.get_or_create_global_step())
        data = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0], [-2.0, 1.5]])
        return {"x": (x, data)}, {"train": train, "loss": loss}, True
    return build


def _input_pipeline_graph():
    """A model reading a tf.data iterator through `placeholder_with_default`: saved with `x` as its
    input, the file holds the iterator ops, and the loaded model runs on fed values."""
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    iterator = tf.data.Dataset.from_tensor_slices(rows).batch(2).make_initializable_iterator()
    x = tf.placeholder_with_default(iterator.get_next(), [None, 3], name="x")
    y = tf.reduce_sum(x * 2.0, axis=1)
    return {"x": (x, rows[:2] + 1)}, {"y": y}, False


def _queues_graph():
    """A queue filled and read in one run, an epoch counter (CountUpTo) and a reader's reset: a
    saved graph holds its queues and readers (empty in each new session), as TF1's does."""
    x = tf.placeholder(tf.float32, [2], name="x")
    epochs = tf.Variable(0, dtype=tf.int64, name="epochs")
    q = tf.FIFOQueue(4, [tf.float32, tf.int64], shapes=[[2], []])
    with tf.control_dependencies([q.enqueue([x, epochs.count_up_to(10)])]):
        y, n = q.dequeue()
    return ({"x": (x, np.array([1.0, 2.0], np.float32))},
            {"y": y * 2.0, "n": n, "reset": tf.TextLineReader().reset()}, True)


EXTRA_GRAPHS = {
    "input pipeline": _input_pipeline_graph,
    "queues": _queues_graph,
    "variables": _variables_graph,
    "sgd": _training_graph(lambda: tf.train.GradientDescentOptimizer(0.1)),
    "momentum": _training_graph(lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)),
    "adam": _training_graph(lambda: tf.train.AdamOptimizer(0.01)),
    "rmsprop": _training_graph(lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5,
                                                                  centered=True)),
}
class _Name(str):
    """A graph's name, and for the default run's choice (tests/selection.py) the op type of the
    case it was built from, so that one graph of each op type and kind runs there."""

    def __new__(cls, name, op_type, inputs=()):
        self = super().__new__(cls, name)
        self.op_type, self.inputs = op_type, inputs
        return self


GRAPHS = {**{_Name(f"forward:{c.name}", f"forward {c.op_type}", c.inputs): _case_builder(c, False)
             for c in CASES},
          **{_Name(f"gradient:{c.name}", f"gradient {c.op_type}", c.inputs): _case_builder(c, True)
             for c in CASES if c.grad and _diff_positions(c)},
          **{_Name(name, name): build for name, build in EXTRA_GRAPHS.items()}}


def _round_trip(build, path):
    feeds, outputs, init = build()
    feed_dict = {t: v for t, v in feeds.values()}
    sess = tf.Session()
    if init:
        sess.run(tf.global_variables_initializer())
    tf.save(path, inputs={k: t for k, (t, _) in feeds.items()}, outputs=outputs, session=sess)
    want = sess.run(outputs, feed_dict)
    again = sess.run(outputs, feed_dict)  # stateful graphs: a second step from the new state
    # allow_io: the op cases include ReadFile, WriteFile and the readers, whose saved graphs
    # really read and write the test's own files (loading a file refuses them by default:
    # tests/fileformat/test_io_policy.py)
    model = tf.load(path, allow_io=True)
    got = model.run({k: v for k, (_, v) in feeds.items()})
    got_again = model.run({k: v for k, (_, v) in feeds.items()})
    for name in outputs:
        _assert_bit_identical(got[name], want[name], name)
        _assert_bit_identical(got_again[name], again[name], f"{name} (second run)")
    return model


@pytest.mark.parametrize("name", list(GRAPHS), ids=str)
def test_round_trip_is_bit_identical(name, tmp_path):
    model = _round_trip(GRAPHS[name], str(tmp_path / "model.gfz"))
    original = tf.get_default_graph()
    # the file keeps what the signature needs: the ancestors of its inputs and outputs
    roots = [original.get_operation_by_name(e.name if isinstance(e, tf.Operation) else e.op.name)
             for e in list(model.inputs.values()) + list(model.outputs.values())]
    kept = subgraph_ops(original, roots)
    assert [op.name for op in model.graph.get_operations()] == [op.name for op in kept]
    for a, b in zip(kept, model.graph.get_operations()):
        assert (a.type, [t.name for t in a.inputs], [c.name for c in a.control_inputs]) == (
            b.type, [t.name for t in b.inputs], [c.name for c in b.control_inputs])
        assert [(t.dtype, t.shape) for t in a.outputs] == [(t.dtype, t.shape) for t in b.outputs]
        assert a.device == b.device
        assert sorted(a.attrs) == sorted(b.attrs)
        for key, value in a.attrs.items():
            _assert_same_attr(b.attrs[key], value, f"{a.name}.{key}")


def _assert_same_function(got, want, what):
    """A control-flow op's sub-graph: same ops, edges, attrs, inputs, outputs and captures."""
    assert got.name == want.name and got.error == want.error, what
    for a, b in zip(want.get_operations(), got.get_operations(), strict=True):
        assert (a.name, a.type, [t.name for t in a.inputs]) == (
            b.name, b.type, [t.name for t in b.inputs]), what
        assert [(t.dtype, t.shape) for t in a.outputs] == [(t.dtype, t.shape) for t in b.outputs]
        for key, value in a.attrs.items():
            _assert_same_attr(b.attrs[key], value, f"{what}/{a.name}.{key}")
    assert [t.name for t in got.inputs] == [t.name for t in want.inputs], what
    assert [t.name for t in got.outputs] == [t.name for t in want.outputs], what
    assert [ph.name for _, ph in got.captures] == [ph.name for _, ph in want.captures], what


def _assert_same_attr(got, want, what):
    assert type(got) is type(want), f"{what}: {type(got)} vs {type(want)}"
    if isinstance(want, FuncGraph):
        _assert_same_function(got, want, what)
    elif isinstance(want, (np.ndarray, np.generic)):
        _assert_bit_identical(got, want, what)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            _assert_same_attr(g, w, what)
    elif isinstance(want, float) and want != want:
        assert got != got, what
    else:
        assert got == want, what


# collectives run only under mpirun: tests/interop/distribute saves, loads and runs them there
COVERED_ELSEWHERE = {"MpiAllreduce", "MpiAllgather", "MpiAllgatherGrad", "MpiBroadcast",
                     "MpiAllreduceStart", "MpiAllreduceWait"}


def test_every_registered_op_type_is_round_tripped():
    covered = set()
    for build in GRAPHS.values():
        tf.reset_default_graph()
        build()
        covered.update(op.type for op in tf.get_default_graph().get_operations())
    missing = sorted(t for t in set(registry.registered_types()) - covered - COVERED_ELSEWHERE
                     if not registry.lookup(t).cannot_save)
    assert not missing, f"op types no round-trip graph uses: {missing}"


# ---------------------------------------------------------------------- fresh interpreter
def test_loads_and_runs_in_a_fresh_interpreter(tmp_path):
    feeds, outputs, _ = _variables_graph()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = str(tmp_path / "model.gfz")
    tf.save(path, inputs={"x": feeds["x"][0]}, outputs={"y": outputs["y"]}, session=sess)
    want = sess.run(outputs["y"], {feeds["x"][0]: feeds["x"][1]})
    np.save(tmp_path / "x.npy", feeds["x"][1])
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import graphflow
        model = graphflow.load({path!r})
        out = model.run({{"x": np.load({str(tmp_path / 'x.npy')!r})}})
        np.save({str(tmp_path / 'y.npy')!r}, out["y"])
        building = [m for m in sys.modules if m.startswith("tests") or "test_serialization" in m]
        assert not building, building
        print("ops", model.graph.num_ops())
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=str(tmp_path), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    _assert_bit_identical(np.load(tmp_path / "y.npy"), want, "y")


# ---------------------------------------------------------------------- loaded graphs
def test_loaded_graph_runs_in_a_plain_session_and_keeps_collections(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    v = tf.Variable([1.0, 2.0], name="v")
    loss = tf.reduce_sum(x * v, name="loss")
    tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    tf.add_to_collection("notes", "trained on toy data")
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"loss": loss})  # no session: no values saved
    model = tf.load(path)
    g = model.graph
    assert [t.name for t in g.get_collection(tf.GraphKeys.LOSSES)] == ["loss:0"]
    assert g.get_collection("notes") == ["trained on toy data"]
    (var,) = g.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
    assert var.name == "v:0" and var.initializer.name == "v/Assign"
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run("loss:0", {"x:0": [1.0, 1.0]})
        sess.run(var.initializer)
        assert sess.run("loss:0", {"x:0": [1.0, 1.0]}) == 3.0


def test_source_locations_survive_and_errors_point_at_the_building_line(tmp_path):
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.sqrt(x, name="root")  # the line errors should name
    line = sys._getframe().f_lineno - 1
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": y})
    model = tf.load(path)
    op = model.graph.get_operation_by_name("root")
    assert op.source.filename == __file__ and op.source.lineno == line
    stripped = str(tmp_path / "s.gfz")
    tf.save(stripped, {"x": x}, {"y": y}, strip_source=True)
    assert tf.load(stripped).graph.get_operation_by_name("root").source is None


def test_run_rejects_unknown_names(tmp_path):
    x = tf.placeholder(tf.float32, [], name="x")
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": x * 2.0})
    model = tf.load(path)
    assert model.run({"x": 3.0}) == {"y": np.float32(6.0)}
    with pytest.raises(KeyError, match="inputs are \\['x'\\]"):
        model.run({"z": 1.0})
    with pytest.raises(KeyError, match="outputs are \\['y'\\]"):
        model.run({"x": 1.0}, outputs=["nope"])


def test_save_rejects_bad_signatures(tmp_path):
    x = tf.placeholder(tf.float32, [], name="x")
    path = str(tmp_path / "m.gfz")
    with pytest.raises(TypeError, match="must be a Tensor"):
        tf.save(path, {"x": x.op}, {"y": x})
    with pytest.raises(ValueError, match="non-empty strings"):
        tf.save(path, {"": x}, {"y": x})
    other = tf.Graph()
    with other.as_default():
        z = tf.constant(1.0)
    with pytest.raises(ValueError, match="different graph"):
        tf.save(path, {"x": x}, {"z": z}, graph=tf.get_default_graph())
    assert not os.path.exists(path)


def test_file_layout_is_a_zip_of_readable_json_and_an_npz(tmp_path):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    big = tf.constant(np.arange(100, dtype=np.float32).reshape(25, 4), name="big")
    y = tf.matmul(x, big, transpose_b=True, name="y") + tf.constant(0.1, name="bias")
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": y})
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["graph.json", "tensors.npz"]
        doc = json.loads(zf.read("graph.json"))
        zf.extract("tensors.npz", tmp_path)
    ops = {op["name"]: op for op in doc["ops"]}
    assert doc["format"] == "graphflow-graph" and doc["version"] == 1
    assert ops["y"]["attrs"] == {"transpose_a": False, "transpose_b": True}
    assert ops["x"]["attrs"]["shape"] == {"tuple": [None, 4]}
    assert ops["bias"]["attrs"]["value"] == {"tensor": {"dtype": "float32", "shape": [],
                                                         "values": [0.1]}}
    ref = ops["big"]["attrs"]["value"]["tensor"]["data"]
    with np.load(tmp_path / "tensors.npz", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz[ref], np.arange(100, dtype=np.float32).reshape(25, 4))


def test_saving_is_reproducible_and_a_loaded_graph_saves_back_identically(tmp_path):
    feeds, outputs, init = _training_graph(lambda: tf.train.AdamOptimizer(0.1))()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    inputs = {k: t for k, (t, _) in feeds.items()}
    first, second, again = (str(tmp_path / n) for n in ("a.gfz", "b.gfz", "c.gfz"))
    tf.save(first, inputs, outputs, session=sess)
    tf.save(second, inputs, outputs, session=sess)
    model = tf.load(first)
    tf.save(again, model.inputs, model.outputs, session=model.session)
    data = open(first, "rb").read()
    assert open(second, "rb").read() == data
    assert open(again, "rb").read() == data


def test_a_failed_save_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    x = tf.placeholder(tf.float32, [], name="x")
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": x + 1.0})
    before = open(path, "rb").read()
    big = tf.constant(np.zeros([40], np.float32), name="big")  # stored in the npz

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np.lib.format, "write_array", crash)
    with pytest.raises(OSError, match="disk full"):
        tf.save(path, {"x": x}, {"y": x + tf.reduce_sum(big)})
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["m.gfz"]  # no temporary file left behind
    assert tf.load(path).run({"x": 1.0})["y"] == 2.0


# ---------------------------------------------------------------------- import_graph
def _saved_model(tmp_path):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [-1.0]], name="w")
    y = tf.matmul(x, w, name="y")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run(tf.assign(w, [[2.0], [3.0]]))  # trained values differ from the initial ones
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": y}, session=sess)
    tf.reset_default_graph()
    return path


def test_import_twice_with_prefixes_and_separate_variables(tmp_path):
    path = _saved_model(tmp_path)
    a = tf.import_graph(path, prefix="model")
    b = tf.import_graph(tf.load(path), prefix="model")
    assert a.prefix == "model" and b.prefix == "model_1"
    assert a.outputs["y"].name == "model/y:0" and b.outputs["y"].name == "model_1/y:0"
    assert a.inputs["x"].name == "model/x:0"
    assert [v.name for v in tf.global_variables()] == ["model/w:0", "model_1/w:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())  # the imported initializers: [[1], [-1]]
        sess.run(tf.assign(b.variables[0], [[10.0], [10.0]]))
        ya, yb = sess.run([a.outputs["y"], b.outputs["y"]],
                          {a.inputs["x"]: [[1.0, 1.0]], b.inputs["x"]: [[1.0, 1.0]]})
    assert ya.tolist() == [[0.0]] and yb.tolist() == [[20.0]]


def test_import_with_input_map_and_session_values(tmp_path):
    path = _saved_model(tmp_path)
    z = tf.placeholder(tf.float32, [3, 2], name="z")
    sess = tf.Session()
    imported = tf.import_graph(path, prefix="m", input_map={"x": z * 2.0}, session=sess)
    y = imported.outputs["y"]
    assert y.shape.as_list() == [3, 1]  # shapes re-inferred from the mapped input
    assert imported.inputs["x"].op.type == "Mul"
    out = sess.run(y, {z: [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]})
    assert out.tolist() == [[4.0], [6.0], [10.0]]  # the saved (trained) values, not the initial
    with pytest.raises(ValueError, match="already has an op named"):
        tf.import_graph(path, prefix="m/")
    with pytest.raises(ValueError, match="cannot replace"):
        tf.import_graph(path, prefix="n", input_map={"x": tf.placeholder(tf.int32, [3, 2])})
    with pytest.raises(ValueError, match="neither an input name"):
        tf.import_graph(path, prefix="n", input_map={"nope": z})


def test_loaded_graph_memory_is_bounded_per_op_and_by_the_json_size(tmp_path):
    """docs/security.md "Memory": a loaded op keeps no per-op dicts or lists it does not need,
    no name-table entry until a new name is asked for, and no stack frames; 12k NoOps stay under
    300 B each (measured ~256) and the load's peak under 30x the graph document's size."""
    import gc
    import json
    import tracemalloc
    import zipfile
    n = 12_000
    doc = {"format": "graphflow-graph", "version": 1, "signatures": {"inputs": {}, "outputs": {}},
           "ops": [{"name": f"n{i}", "type": "NoOp"} for i in range(n)]}
    text = json.dumps(doc)
    path = str(tmp_path / "noops.gfz")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("graph.json", text)
    del doc
    gc.collect()
    tracemalloc.start()
    try:
        model = tf.load(path)
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert model.graph.num_ops() == n
    op = model.graph.get_operation_by_name("n7")
    assert op.source is None and not op.attrs and not op.outputs
    assert retained / n < 300, retained / n
    assert peak < 30 * len(text), peak / len(text)


def test_default_op_limit_grows_with_the_file_size(tmp_path):
    import json
    import zipfile

    from graphflow.fileformat import file_io
    from graphflow.framework.errors import GraphFormatError
    n = 30_000  # identical NoOps compress to a few bytes each: more ops than the file can hold
    ops = [{"name": "n", "type": "NoOp"}] * n
    doc = {"format": "graphflow-graph", "version": 1, "ops": ops,
           "signatures": {"inputs": {}, "outputs": {}}}
    path = str(tmp_path / "dense.gfz")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("graph.json", json.dumps(doc))
    size = (tmp_path / "dense.gfz").stat().st_size
    limits = file_io.default_limits_for(path)
    assert limits.max_ops == max(file_io.OPS_FLOOR, size // file_io.FILE_BYTES_PER_OP) < n
    with pytest.raises(GraphFormatError, match=f"{n} ops, more than the limit of "
                                               f"{limits.max_ops}"):
        tf.load(path)
    assert file_io.default_limits_for(str(tmp_path / "absent.gfz")) is file_io.DEFAULT_LIMITS
