"""How bench_peers.py reaches each framework it compares: graphflow, TensorFlow's `tf.compat.v1`,
PyTorch, JAX and onnxruntime, each imported only when a row asks for it; a missing one is an
`Unavailable` with the reason, printed in its column."""

import importlib

FRAMEWORKS = ("graphflow", "tf1", "torch", "jax", "onnxruntime")


class Unavailable(Exception):
    """A framework cannot run a workload here (not installed, no such form): the reason."""


def module(name, why=None):
    try:
        return importlib.import_module(name)
    except ImportError:
        raise Unavailable(why or f"{name} is not installed") from None


def graphflow_tf():
    import graphflow
    return graphflow


def tf1_tf():
    from common import tensorflow_v1
    tf1 = tensorflow_v1()
    if tf1 is None:
        raise Unavailable("tensorflow is not installed")
    return tf1


def torch_module(threads):
    torch = module("torch")
    if threads:
        torch.set_num_threads(threads)
    return torch


def jax_modules():
    jax = module("jax")
    return jax, importlib.import_module("jax.numpy")
