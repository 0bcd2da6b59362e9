"""Device placement (graphflow/placement.py): decisions, copies, fallbacks, device-resident variables.

Without a GPU the placement logic still runs for real against a *fake GPU*: a backend whose table
mirrors the CUDA kernel table (same op types, dtype rules, host inputs/outputs) but whose kernels are
the CPU kernels behind a `FakeDeviceArray` wrapper that refuses to be used as a host array. A missing
host<->device copy therefore fails loudly, and values must match a CPU session exactly. The real
CUDA backend is checked for its "no CUDA device available" error where there is no GPU.
"""

import contextlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import placement
from graphflow.kernels import KernelNode
from graphflow.kernels import cpu as cpu_table
from graphflow.kernels import cuda as cuda_table
from graphflow.kernels.cuda import KernelSpec, NoCudaDeviceError
from graphflow.ops import registry
from tests.op_cases import all_cases

GPU_OK, GPU_REASON = cuda_table.availability()


# ---------------------------------------------------------------- the fake GPU
class FakeDeviceArray:
    """A 'device' array: holds a private numpy copy; any host use of it raises."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = np.array(value, copy=True)

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def size(self):
        return self.value.size

    def __array__(self, *args, **kwargs):
        raise TypeError("a device array reached a host kernel (a copy is missing)")


class _DeviceStoreView:
    """The variable store as a fake-GPU kernel sees it: device reads and writes."""

    def __init__(self, store, backend):
        self.store, self.backend = store, backend

    def read(self, name):
        value = self.store.read_device(name, self.backend)
        assert isinstance(value, FakeDeviceArray)
        return value.value

    def write(self, name, value):
        self.store.write(name, FakeDeviceArray(value))
        return value

    def is_initialized(self, name):
        return self.store.is_initialized(name)


class _DeviceState:
    def __init__(self, state, backend):
        self.variables = _DeviceStoreView(state.variables, backend)
        self.rng = state.rng


class FakeTable:
    """The CUDA table's entries (types, dtype checks, host inputs/outputs) with CPU kernels."""

    def __init__(self, backend, exclude=()):
        self.backend, self.exclude = backend, set(exclude)
        self.calls = []

    def spec(self, op_type):
        real = cuda_table.spec(op_type)
        if real is None or op_type in self.exclude:
            return None
        return KernelSpec(op_type, self._builder(op_type, real), real.dtypes, real.check,
                          real.host_inputs, real.host_outputs)

    def lookup(self, op_type):
        spec = self.spec(op_type)
        if spec is None:
            raise LookupError(f"No fake GPU kernel for '{op_type}'")
        return spec.build

    def _builder(self, op_type, real):
        calls, backend = self.calls, self.backend

        def build(node):
            device_node = KernelNode(node.name, node.type, node.attrs, node.in_dtypes,
                                     node.out_dtypes, node.out_shapes,
                                     _DeviceState(node.state, backend))
            # the CPU implementation the CPU plan chooses for the node: the same bits
            fn = cpu_table.choose(node).build(device_node)

            def run(*args):
                host = []
                for i, a in enumerate(args):
                    if i in real.host_inputs:
                        assert isinstance(a, np.ndarray), f"{op_type} input {i} must be on the host"
                        host.append(a)
                    else:
                        assert isinstance(a, FakeDeviceArray), \
                            f"{op_type} input {i} must be on the device, got {type(a).__name__}"
                        host.append(a.value)
                calls.append(op_type)
                out = fn(*host)
                if isinstance(out, tuple):
                    return tuple(o if i in real.host_outputs else FakeDeviceArray(o)
                                 for i, o in enumerate(out))
                return out if 0 in real.host_outputs else FakeDeviceArray(out)
            return run
        return build


class FakeBackend:
    def __init__(self, device="/gpu:0", exclude=()):
        self.device = device
        self.table = FakeTable(self, exclude)
        self.uploads = self.downloads = self.runs = 0

    def is_device_array(self, x):
        return isinstance(x, FakeDeviceArray)

    def to_device(self, x):
        assert isinstance(x, (np.ndarray, np.generic)), f"uploading a {type(x).__name__}"
        self.uploads += 1
        return FakeDeviceArray(x)

    def to_host(self, x):
        assert isinstance(x, FakeDeviceArray), f"downloading a {type(x).__name__}"
        self.downloads += 1
        return np.array(x.value, copy=True)

    @contextlib.contextmanager
    def active(self):
        yield self

    def wrap_run(self, fn):
        def run(*args):  # feeds, and a traced run's record list
            self.runs += 1
            return fn(*args)
        return run


@pytest.fixture
def fake_gpu():
    backend = FakeBackend()
    with placement.use_backend(backend):
        yield backend


class _Meta:
    plan = None


def _run(sess, fetches, feed_dict=None):
    meta = _Meta()
    out = sess.run(fetches, feed_dict, run_metadata=meta)
    return out, meta.plan.placement


# ---------------------------------------------------------------- no GPU here: clear errors
@pytest.mark.skipif(GPU_OK, reason="a CUDA device is available on this machine")
class TestWithoutGPU:
    def test_reason_is_reported(self):
        assert GPU_REASON and isinstance(GPU_REASON, str)
        assert tf.Session().list_devices() == ["/cpu:0"]

    def test_gpu_session_fails_clearly(self):
        with pytest.raises(NoCudaDeviceError, match="no CUDA device available: .+"):
            tf.Session(device="/gpu:0")

    def test_gpu_pinned_op_fails_clearly_and_names_it(self):
        x = tf.placeholder(tf.float32, [2])
        with tf.device("/gpu:0"):
            y = tf.multiply(x, 2.0, name="doubled")
        with tf.Session() as sess:
            with pytest.raises(NoCudaDeviceError, match=r"no CUDA device available: .*'doubled'"):
                sess.run(y, {x: [1.0, 2.0]})
            # the CPU part of the graph is unaffected
            assert sess.run(x * 3.0, {x: [1.0, 2.0]}).tolist() == [3.0, 6.0]

    def test_cpu_session_and_bad_device_names(self):
        with tf.Session(device="/cpu:0") as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0
        with pytest.raises(ValueError, match="Unknown device"):
            tf.Session(device="/tpu:0")


# ---------------------------------------------------------------- decisions and copies
def test_default_device_places_every_op_with_a_kernel(fake_gpu):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    h = tf.nn.relu(tf.matmul(x, w), name="h")
    y = tf.reduce_sum(h * h, axis=1, name="y")
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        xv = np.array([[1, -2, 3], [0.5, 1, -1]], np.float32)
        out, pl = _run(sess, y, {x: xv})
    expected = np.sum(np.maximum(xv @ np.arange(6, dtype=np.float32).reshape(3, 2), 0) ** 2, 1)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert isinstance(out, np.ndarray)
    devices = {op.name: d for op, d in pl.device_of.items()}
    assert devices["h"] == devices["y"] == devices["MatMul"] == "/gpu:0"
    assert devices["w"] == "/cpu:0"  # constants stay on the host, uploaded once
    assert not pl.fallbacks
    # one upload of x per run, the constant once at build; one download: the fetch
    kinds = sorted((t.name, have, want) for t, have, want, _ in pl.copies)
    assert kinds == [("w:0", "host", "/gpu:0"), ("x:0", "host", "/gpu:0"), ("y:0", "/gpu:0", "host")]
    uploads, downloads = fake_gpu.uploads, fake_gpu.downloads
    sess2_out = None
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        sess.run(y, {x: xv})
        before = (fake_gpu.uploads, fake_gpu.downloads)
        sess2_out = sess.run(y, {x: xv})
        assert (fake_gpu.uploads - before[0], fake_gpu.downloads - before[1]) == (1, 1)
    np.testing.assert_allclose(sess2_out, out)
    assert uploads >= 2 and downloads >= 1


def test_fallback_inserts_copies_and_is_reported(fake_gpu):
    fake_gpu.table.exclude.add("Tanh")
    x = tf.placeholder(tf.float32, [4], name="x")
    a = tf.multiply(x, 2.0, name="a")
    b = tf.tanh(a, name="b")             # no (fake) GPU kernel: CPU, copies both ways
    c = tf.add(b, a, name="c")           # back on the GPU: a is reused on the device
    d = tf.cast(tf.cast(x, tf.float16), tf.float32, name="d")  # float16 has no CUDA kernels
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        out, pl = _run(sess, [c, d], {x: np.arange(4, dtype=np.float32)})
    np.testing.assert_allclose(out[0], np.tanh(np.arange(4) * 2.0) + np.arange(4) * 2.0, rtol=1e-6)
    reasons = {op.name: reason for op, _, reason in pl.fallbacks}
    assert reasons["b"] == "no CUDA kernel for op type 'Tanh'"
    assert "float16" in reasons["d"] and "float16" in reasons["Cast"]
    report = pl.report()
    assert "fallback to /cpu:0" in report and "b (Tanh): no CUDA kernel for op type 'Tanh'" in report
    copies = {(t.name, want) for t, _, want, _ in pl.copies}
    assert ("a:0", "host") in copies and ("b:0", "/gpu:0") in copies
    # x is uploaded once although two GPU ops read it
    assert sum(1 for t, _, want, _ in pl.copies if t.name == "x:0" and want == "/gpu:0") == 1


def test_device_scope_places_only_the_scoped_ops(fake_gpu):
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/gpu:0"):
        g = tf.square(x, name="g")
    c = tf.add(g, 1.0, name="c")
    with tf.Session(optimize=False) as sess:
        out, pl = _run(sess, c, {x: [1.0, 2.0, 3.0]})
    assert out.tolist() == [2.0, 5.0, 10.0]
    devices = {op.name: d for op, d in pl.device_of.items()}
    assert devices["g"] == "/gpu:0" and devices["c"] == "/cpu:0"
    assert fake_gpu.table.calls == ["Square"]


def test_shape_arithmetic_stays_on_the_host(fake_gpu):
    x = tf.placeholder(tf.float32, [None, 2, 3], name="x")
    h = tf.multiply(x, 2.0, name="h")
    flat = tf.reshape(h, tf.stack([tf.shape(h)[0], -1]), name="flat")
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        out, pl = _run(sess, flat, {x: np.ones((4, 2, 3), np.float32)})
    assert out.shape == (4, 6) and out.tolist() == np.full((4, 6), 2.0).tolist()
    devices = {op.type: d for op, d in pl.device_of.items()}
    assert devices["Reshape"] == devices["Shape"] == "/gpu:0"
    assert devices["StridedSlice"] == devices["Pack"] == "/cpu:0"
    kept = {op.type for op, _ in pl.kept_on_host}
    assert {"StridedSlice", "Pack"} <= kept
    # Shape returns a host array, Reshape reads its shape on the host: nothing else moves
    assert sorted((t.op.type, want) for t, _, want, _ in pl.copies if t.op.type != "Const") == [
        ("Placeholder", "/gpu:0"), ("Reshape", "host")]


def test_variables_stay_on_the_device_and_training_matches_cpu(fake_gpu):
    def model():
        tf.reset_default_graph()
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = tf.layers.dense(x, 8, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 3)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        return x, y, loss, train

    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(16, 5)).astype(np.float32), rng.integers(0, 3, 16)
    results = {}
    for device in ("/cpu:0", "/gpu:0"):
        x, y, loss, train = model()
        with tf.Session(device=device) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(5)]
            values = sess.variable_values()
            stored = dict(sess._state.variables.values)
            meta = _Meta()
            sess.run(train, {x: xs, y: ys}, run_metadata=meta)
            report = meta.plan.placement.report()
        results[device] = (losses, values, stored, report)
    cpu_losses, cpu_values, _, _ = results["/cpu:0"]
    gpu_losses, gpu_values, gpu_stored, report = results["/gpu:0"]
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-5)
    assert gpu_losses[-1] < gpu_losses[0]
    assert sorted(gpu_values) == sorted(cpu_values)
    for name, value in cpu_values.items():
        assert isinstance(gpu_values[name], np.ndarray)
        np.testing.assert_allclose(gpu_values[name], value, rtol=1e-5, atol=1e-6)
    # float variables (weights, Adam slots, beta powers) live on the device between runs
    on_device = {n for n, v in gpu_stored.items() if isinstance(v, FakeDeviceArray)}
    assert {n for n, v in cpu_values.items() if v.dtype == np.float32} <= on_device
    assert "ApplyAdam" in fake_gpu.table.calls
    assert "fallback" not in report, report


def test_a_traced_run_on_the_gpu_gives_the_untraced_values(fake_gpu):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.nn.relu(x * 2.0 - 1.0, name="y")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    xv = np.array([[0.0, 0.5, 1.0]], np.float32)
    with tf.Session(device="/gpu:0") as sess:
        want = sess.run(y, {x: xv})
        meta = tf.RunMetadata()
        got = sess.run(y, {x: xv}, options=options, run_metadata=meta)
    np.testing.assert_array_equal(got, want)
    assert fake_gpu.runs == 2
    assert any(n.node_stats for n in meta.step_stats.dev_stats)


def test_failed_run_changes_no_device_variable(fake_gpu):
    v = tf.Variable(np.ones(3, np.float32), name="v")
    x = tf.placeholder(tf.float32, [None], name="x")
    update = v.assign(v * 2.0)
    with tf.control_dependencies([update]):
        bad = tf.reshape(x, [3]) + 1.0
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        sess.run(v.initializer)
        sess.run(update)
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad, {x: np.ones(4, np.float32)})
        assert sess.run(v).tolist() == [2.0, 2.0, 2.0]
        assert isinstance(sess._state.variables.values["v"], FakeDeviceArray)


def test_host_loaded_variable_moves_to_the_device_once(fake_gpu):
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    y = v * 3.0
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        v.load(np.array([1.0, 2.0], np.float32), sess)
        assert isinstance(sess._state.variables.values["v"], np.ndarray)
        assert sess.run(y).tolist() == [3.0, 6.0]
        assert isinstance(sess._state.variables.values["v"], FakeDeviceArray)
        uploads = fake_gpu.uploads
        assert sess.run(y).tolist() == [3.0, 6.0]
        assert fake_gpu.uploads == uploads  # no second upload


def test_optimized_plans_are_placed_too(fake_gpu):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    y = tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x)
    with tf.Session(device="/gpu:0") as sess:
        out, pl = _run(sess, y, {x: np.ones((4, 3), np.float32)})
    np.testing.assert_allclose(out, np.tanh(3.0) * (1 / (1 + np.exp(-1.0))) * np.ones((4, 3)),
                               rtol=1e-6)
    types = {op.type for op, d in pl.device_of.items() if d == "/gpu:0"}
    assert "FusedElementwise" in types


def test_one_gpu_per_plan(fake_gpu):
    x = tf.placeholder(tf.float32, [2])
    with tf.device("/gpu:0"):
        a = x * 2.0
    with tf.device("/gpu:1"):
        b = a * 3.0
    with tf.Session(optimize=False) as sess, pytest.raises(ValueError, match="one GPU per plan"):
        sess.run(b, {x: [1.0, 2.0]})


# ---------------------------------------------------------------- the whole op table on the fake GPU
CASES = all_cases()


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_cases_on_the_fake_gpu_match_the_cpu(case, fake_gpu, monkeypatch):
    """Every op case runs with every op that has a CUDA kernel on the (fake) GPU (integer shape
    arithmetic included): the declared host inputs/outputs and the inserted copies must give
    exactly the CPU values."""
    monkeypatch.setattr(placement.Placement, "host_int_arithmetic", False)
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape, name=f"in{i}")
                    for i, x in enumerate(case.inputs)]
    outs = _as_list(case.build(*placeholders))
    feed = dict(zip(placeholders, case.inputs))
    with tf.Session(optimize=False) as sess:
        want = sess.run(outs, feed)
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        got, pl = _run(sess, outs, feed)
    random = registry.lookup(case.op_type).random  # a fresh session draws other numbers
    for g, w in zip(got, want):
        if isinstance(w, bytes):  # a scalar tf.string is fetched as bytes, as in TF1
            assert g == w, case.name
            continue
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape
        if not random:
            np.testing.assert_array_equal(g, w, err_msg=case.name)
    if cuda_table.spec(case.op_type) is not None and not any(
            op.type == case.op_type for op, _, _ in pl.fallbacks):
        assert case.op_type in fake_gpu.table.calls or case.op_type == "Const"


# ------------------------------------------------------------------------- soft placement
def _multi_tower_step(num_towers, device_fn):
    """cifar10_multi_gpu_train's pattern: variables on the CPU, one tower per GPU sharing them,
    gradients averaged over the towers, one apply step. Returns the losses of 5 steps."""
    rng = np.random.default_rng(0)
    x_all = rng.normal(size=(8, 3)).astype(np.float32)
    y_all = (x_all @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    g = tf.Graph()
    with g.as_default(), tf.device("/cpu:0"):
        opt = tf.train.GradientDescentOptimizer(0.1)
        x = tf.placeholder("float", [None, 3])
        y = tf.placeholder("float", [None, 1])
        tower_grads, losses = [], []
        with tf.variable_scope(tf.get_variable_scope()):
            for i in range(num_towers):
                with tf.device(device_fn(i)), tf.name_scope(f"tower_{i}"):
                    with tf.device("/cpu:0"):
                        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
                    n = 8 // num_towers
                    pred = tf.matmul(x[i * n:(i + 1) * n], w)
                    loss = tf.reduce_mean(tf.square(pred - y[i * n:(i + 1) * n]))
                    tf.get_variable_scope().reuse_variables()
                    tower_grads.append(opt.compute_gradients(loss))
                    losses.append(loss)
        averaged = []
        for grads_and_vars in zip(*tower_grads):
            grads = [tf.expand_dims(gv[0], 0) for gv in grads_and_vars]
            averaged.append((tf.reduce_mean(tf.concat(grads, 0), 0), grads_and_vars[0][1]))
        train = opt.apply_gradients(averaged)
        mean_loss = tf.add_n(losses) / float(num_towers)
        config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            out = []
            for _ in range(5):
                value, _ = sess.run([mean_loss, train], {x: x_all, y: y_all})
                out.append(value)
    return out, g


def _assign_to_device(device, ps_device="/cpu:0"):
    """The device function of TF1 multi-GPU examples: variables on the parameter device."""
    def assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        return ps_device if node_def.op in ("Variable", "VariableV2") else device
    return assign


@pytest.mark.parametrize("tower_device", [lambda i: f"/gpu:{i}",
                                          lambda i: _assign_to_device(f"/gpu:{i}")],
                         ids=["device strings", "device functions"])
def test_multi_tower_program_runs_with_soft_placement_and_matches_one_tower(tower_device):
    towers, graph = _multi_tower_step(2, tower_device)
    single, _ = _multi_tower_step(1, lambda i: "/cpu:0")
    assert towers[-1] < towers[0] * 0.7
    np.testing.assert_allclose(towers, single, rtol=1e-5)
    devices = {op.device for op in graph.get_operations() if op.name.startswith("tower_1/")}
    assert "/gpu:1" in devices  # requested as written; the session ran it where it could


def test_without_soft_placement_an_unavailable_gpu_is_an_error():
    x = tf.placeholder(tf.float32, [])
    with tf.device("/gpu:7"):  # no machine running these tests has eight GPUs in one process
        y = tf.multiply(x, 3.0, name="tripled")
    with tf.Session() as sess:
        with pytest.raises((NoCudaDeviceError, ValueError), match="tripled"):
            sess.run(y, {x: 2.0})
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(y, {x: 2.0}) == 6.0


def test_memory_plan_follows_placement_and_copies_are_step_data(fake_gpu):
    fake_gpu.table.exclude.add("Tanh")
    x = tf.placeholder(tf.float32, [4], name="x")
    a = tf.multiply(x, 2.0, name="a")     # GPU
    b = tf.tanh(a, name="b")              # CPU (no fake GPU kernel), reads a copy of a
    c = tf.sin(b, name="c")               # GPU again, reads a copy of b
    d = tf.exp(tf.cos(x, name="e"), name="d")  # GPU: never written in place by a CPU kernel
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        out, pl = _run(sess, [c, d], {x: np.arange(4, dtype=np.float32)})
        plan = list(sess._compiled_plans())[-1]
    np.testing.assert_allclose(out[0], np.sin(np.tanh(np.arange(4) * 2.0)), rtol=1e-6)
    np.testing.assert_allclose(out[1], np.exp(np.cos(np.arange(4))), rtol=1e-6)
    # b's only input lives on the device: the CPU kernel must not write into its host copy,
    # and GPU steps never get an out= buffer from the (CPU) memory plan
    assert plan.memory_plan.inplace == {}
    steps = {s.op.name: s for s in plan.step_list.steps}
    (to_host,) = steps["b"].copies
    assert not to_host.to_device and steps["b"].args == (to_host.target,)
    (to_device,) = steps["c"].copies
    assert to_device.to_device and to_device.source == steps["b"].outputs[0]
    assert all(kind in "fvcu" for s in plan.step_list.steps for kind, _ in s.args)
