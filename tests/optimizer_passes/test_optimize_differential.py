"""Differential tests of the optimizer: many random graphs (seeded), each run unoptimized, with the
whole pipeline and with each pass alone; every fetched value must agree.

The generator mixes what the passes look for: elementwise chains (fusion), broadcasting operands of
shapes [4, 5], [5], [1, 5], [4, 1] and [], neutral constants (x*1, x+0, --x, transposes, reshapes,
log(softmax)), all-constant subexpressions (folding), repeated subexpressions (CSE), reductions
with keepdims, matmuls, selects, and the gradients of a scalar loss with respect to the inputs.
With `control_flow=True` it also builds tf.cond (on run-time and on constant predicates) and
tf.while_loop over pool tensors, so the loss's gradients run through If and WhileGrad ops.
"""

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import PIPELINE

SHAPES = [(4, 5), (5,), (1, 5), (4, 1), ()]
FULL = (4, 5)


class RandomGraph:
    """A random graph over a pool of float tensors whose shapes all broadcast to [4, 5].

    `smooth` leaves out comparisons and kinks (select, max/min, relu, abs, reduce_max): there, a
    last-bit difference (log_softmax is more accurate than log(softmax)) can flip a branch, which
    float32 graphs of this depth would amplify into a visible difference."""

    def __init__(self, seed, dtype=tf.float64, smooth=False, control_flow=False):
        self.rng = np.random.default_rng(seed)
        self.smooth = smooth
        self.control_flow = control_flow
        self.dtype = dtype
        self.np_dtype = dtype.as_numpy_dtype
        self.inputs = [tf.placeholder(dtype, s, name=f"in{i}") for i, s in enumerate(SHAPES[:4])]
        self.pool = list(self.inputs)
        self.shapes = {t: tuple(t.shape.as_list()) for t in self.pool}
        self.made = []  # (builder, operands): replayed later for duplicates
        for value in (1.0, 0.0, 0.5, -2.0):
            self._add(tf.constant(value, dtype))
        self._add(tf.constant(self.rng.uniform(-1, 1, (4, 5)).astype(self.np_dtype)))
        self._add(tf.constant(np.ones(5, self.np_dtype)))
        for _ in range(int(self.rng.integers(8, 22))):
            self._step()

    def _add(self, t):
        self.pool.append(t)
        self.shapes[t] = tuple(t.shape.as_list())
        return t

    def _pick(self, full=False):
        options = [t for t in self.pool if self.shapes[t] == FULL] if full else self.pool
        return options[int(self.rng.integers(len(options)))]

    def _const_pick(self):
        consts = [t for t in self.pool if t.op.type == "Const"]
        return consts[int(self.rng.integers(len(consts)))]

    def _step(self):
        kinds = ["unary", "unary", "binary", "binary", "neutral", "reduce", "matmul", "shape",
                 "softmax", "const", "duplicate", "gated"]
        kinds = kinds if self.smooth else kinds + ["select"]
        kind = self.rng.choice(kinds + ["cond", "cond", "loop"] if self.control_flow else kinds)
        r = self.rng
        if kind == "unary":
            fns = [tf.tanh, tf.sigmoid, tf.negative, tf.sin, tf.square, tf.nn.softplus,
                   lambda x: tf.exp(tf.tanh(x))]
            if not self.smooth:
                fns += [tf.nn.relu, tf.abs, tf.nn.elu]
            self._record(fns[int(r.integers(len(fns)))], [self._pick()])
        elif kind == "binary":
            fns = [tf.add, tf.subtract, tf.multiply, lambda a, b: a / (b * b + 1.0)]
            if not self.smooth:
                fns += [tf.maximum, tf.minimum, lambda a, b: a / (tf.abs(b) + 1.0)]
            self._record(fns[int(r.integers(len(fns)))], [self._pick(), self._pick()])
        elif kind == "neutral":
            fn = [lambda x: x * 1.0, lambda x: 1.0 * x, lambda x: x + 0.0, lambda x: x - 0.0,
                  lambda x: tf.negative(-x), lambda x: tf.identity(x), lambda x: x / 1.0,
                  lambda x: tf.cast(x, self.dtype)][int(r.integers(8))]
            self._record(fn, [self._pick()])
        elif kind == "reduce":
            fns = [tf.reduce_sum, tf.reduce_mean] + ([] if self.smooth else [tf.reduce_max])
            fn = fns[int(r.integers(len(fns)))]
            axis = int(r.integers(2))
            self._record(lambda x: fn(x, axis=axis, keepdims=True), [self._pick(full=True)])
        elif kind == "matmul":  # [4, 5] @ [5, 4] @ [4, 5]
            w = self._pick(full=True) if r.integers(2) else self.inputs[0]
            self._record(lambda x, y: tf.matmul(tf.matmul(x, y, transpose_b=True), y) * 0.1,
                         [self._pick(full=True), w])
        elif kind == "shape":
            fn = [lambda x: tf.transpose(tf.transpose(x)),
                  lambda x: tf.reshape(tf.reshape(x, [20]), [4, 5]),
                  lambda x: tf.reshape(x, [4, 5])][int(r.integers(3))]
            self._record(fn, [self._pick(full=True)])
        elif kind == "softmax":
            self._record(lambda x: tf.log(tf.nn.softmax(x)), [self._pick(full=True)])
        elif kind == "select":
            self._record(lambda a, b: tf.where(a > b, a, b * 0.5), [self._pick(full=True),
                                                                    self._pick(full=True)])
        elif kind == "cond":  # a run-time or a constant predicate (folding prunes the branch)
            flag = [None, True, False][int(r.integers(3))]

            def pred(a, b, flag=flag):
                return tf.reduce_sum(a) > tf.reduce_sum(b) if flag is None else tf.constant(flag)
            self._record(lambda a, b: tf.cond(pred(a, b), lambda: tf.tanh(a * b + 1.0) + a,
                                              lambda: tf.sin(b) * 2.0 - a * 0.5),
                         [self._pick(full=True), self._pick()])
        elif kind == "loop":  # the body captures an outer tensor and keeps constant subterms
            steps = int(r.integers(1, 4))
            self._record(lambda a, b: tf.while_loop(
                lambda i, y: i < steps,
                lambda i, y: (i + 1, tf.tanh(y * 0.5 + b * 1.0 + tf.constant(0.5, self.dtype)
                                             * tf.constant(2.0, self.dtype))),
                [tf.constant(0), a])[1], [self._pick(full=True), self._pick()])
        elif kind == "gated":  # built under a control block (the edge moves to its readers)
            gates = [t for t in self.pool if t not in self.inputs]
            gate = gates[int(r.integers(len(gates)))]

            def gated(a, gate=gate):
                with tf.control_dependencies([gate.op]):
                    return tf.tanh(a * 0.5) + 1.0
            self._record(gated, [self._pick()])
        elif kind == "const":
            a, b = self._const_pick(), self._const_pick()
            self._record(lambda x, y: tf.tanh(x * y + 1.0), [a, b])
        elif self.made:
            fn, operands = self.made[int(r.integers(len(self.made)))]
            self._record(fn, operands)

    def _record(self, fn, operands):
        self.made.append((fn, operands))
        self._add(fn(*operands))

    def fetches(self):
        """Some pool tensors, a scalar loss, and its gradients w.r.t. the inputs."""
        made = self.pool[len(self.inputs) + 6:] or self.pool
        picks = [made[int(i)] for i in self.rng.integers(len(made), size=3)]
        loss = tf.add_n([tf.reduce_sum(t * t) for t in made[-4:]] + [tf.reduce_sum(made[0])])
        grads = [g for g in tf.gradients(loss, self.inputs) if g is not None]
        return picks + [loss] + grads

    def feed(self):
        return {t: self.rng.uniform(-2, 2, self.shapes[t]).astype(self.np_dtype)
                for t in self.inputs}


def _run(fetches, feed, **session_args):
    with tf.Session(**session_args) as sess:
        return sess.run(fetches, feed)


def _check(want, got, rtol, atol, what):
    for i, (w, g) in enumerate(zip(want, got)):
        w, g = np.asarray(w), np.asarray(g)
        assert w.dtype == g.dtype and w.shape == g.shape, f"{what}, fetch {i}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{what}, fetch {i}")


@pytest.mark.parametrize("seed", range(120))
def test_optimized_equals_unoptimized_float64(seed):
    graph = RandomGraph(seed)
    fetches = graph.fetches()
    feed = graph.feed()
    want = _run(fetches, feed, optimize=False)
    _check(want, _run(fetches, feed), 1e-9, 1e-12, f"seed {seed}, all passes")
    if seed < 30:  # and each pass on its own
        for p in PIPELINE:
            _check(want, _run(fetches, feed, passes=[p.NAME]), 1e-9, 1e-12,
                   f"seed {seed}, pass {p.NAME}")


@pytest.mark.parametrize("seed", range(1000, 1040))
def test_optimized_equals_unoptimized_float32(seed):
    graph = RandomGraph(seed, tf.float32, smooth=True)
    fetches = graph.fetches()
    feed = graph.feed()
    want = _run(fetches, feed, optimize=False)
    _check(want, _run(fetches, feed), 2e-5, 1e-5, f"seed {seed}, all passes")


@pytest.mark.parametrize("seed", range(2000, 2030))
def test_optimized_equals_unoptimized_with_conds_and_loops(seed):
    graph = RandomGraph(seed, control_flow=True)
    fetches = graph.fetches()
    feed = graph.feed()
    want = _run(fetches, feed, optimize=False)
    _check(want, _run(fetches, feed), 1e-9, 1e-12, f"seed {seed}, all passes")
    if seed < 2010:
        for p in PIPELINE:
            _check(want, _run(fetches, feed, passes=[p.NAME]), 1e-9, 1e-12,
                   f"seed {seed}, pass {p.NAME}")


def test_the_control_flow_generator_builds_conds_loops_and_prunes():
    types, pruned = set(), 0
    for seed in range(2000, 2030):
        tf.reset_default_graph()
        graph = RandomGraph(seed, control_flow=True)
        fetches = graph.fetches()
        types |= {op.type for op in tf.get_default_graph().get_operations()}
        _, report = tf.optimize(fetches, feeds=graph.inputs)
        pruned += next(p for p in report.passes if p.name == "constant_folding").details[
            "pruned_conds"]
    assert {"If", "While", "WhileGrad"} <= types and pruned > 0


def test_the_generator_exercises_every_pass():
    rewrites = {p.NAME: 0 for p in PIPELINE}
    for seed in range(40):
        tf.reset_default_graph()
        graph = RandomGraph(seed)
        _, report = tf.optimize(graph.fetches(), feeds=graph.inputs)
        for p in report.passes:
            rewrites[p.name] += p.rewrites
    assert all(count > 0 for name, count in rewrites.items() if name != "prune"), rewrites
