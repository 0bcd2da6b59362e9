"""The op table's test cases: every registered op type has at least one `OpCase`.

Each family keeps its cases in its own module (`math_cases.py`, `array_cases.py`, `nn_cases.py`,
...). The generic harnesses (`tests/test_ops.py` forward + shape inference, `tests/test_gradients.py`
finite differences) run over `all_cases()`; nothing is hand-written per op.
"""

import dataclasses
import importlib
import pkgutil
from typing import Callable, Optional, Sequence

import numpy as np


@dataclasses.dataclass
class OpCase:
    """One way to exercise `op_type`.

    build(*input_tensors) -> Tensor (or tuple of Tensors) using the public TF1-named API.
    inputs: numpy arrays fed through placeholders (their dtype is the placeholder's dtype).
    reference(*input_arrays) -> expected numpy value(s) (same structure as build's result).
    grad: check the gradient w.r.t. the float inputs by finite differences (cast to float64).
    grad_inputs: which input positions to differentiate (default: all floating inputs).
    second_order: False for ops whose gradient has no gradient (through a while_loop).
    shape_from_values: the output shape depends on the values fed to this case (reduction axes
        fed at run time), so static shape inference is checked for compatibility only.
    """

    op_type: str
    build: Callable
    inputs: Sequence[np.ndarray]
    reference: Optional[Callable] = None
    grad: bool = True
    grad_inputs: Optional[Sequence[int]] = None
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-5
    unknown_shapes: bool = True  # also build with shape-less placeholders
    second_order: bool = True  # also check the gradient of the gradient
    shape_from_values: bool = False
    name: str = ""

    def __post_init__(self):
        self.inputs = [np.asarray(x) for x in self.inputs]
        if not self.name:
            shapes = "x".join(str(list(x.shape)) for x in self.inputs)
            self.name = f"{self.op_type}[{shapes}]"


def all_cases():
    cases = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(module, "CASES", []))
    return cases


def run_build(build, inputs, threads=1, optimize=True):
    """`build(*placeholders)` on a fresh default graph, run with `inputs` fed, in a session on
    `threads` intra-op threads (the kernel tests' way to run a case on one route or another)."""
    import graphflow as tf
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in inputs]
    out = build(*placeholders)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config, optimize=optimize) as sess:
        return sess.run(out, dict(zip(placeholders, inputs)))


def rand(*shape, dtype=np.float64, low=-2.0, high=2.0, seed=None):
    """Deterministic random test data (seeded by the shape unless `seed` is given)."""
    r = np.random.default_rng(seed if seed is not None else abs(hash(shape)) % 2**32)
    return r.uniform(low, high, size=shape).astype(dtype)


def positive(*shape, dtype=np.float64, low=0.5, high=2.0):
    return rand(*shape, dtype=dtype, low=low, high=high)


def away_from_zero(*shape, dtype=np.float64):
    """Values with |x| in [0.3, 2]: safe for kinks at 0 (abs, relu, sign) in finite differences."""
    x = rand(*shape, dtype=dtype, low=0.3, high=2.0)
    signs = np.where(rand(*shape, low=-1, high=1) < 0, -1, 1)
    return (x * signs).astype(dtype)
