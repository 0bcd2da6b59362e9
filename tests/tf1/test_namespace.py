"""Public modules export only their API, and every other TF1 name fails with a message that points to
docs/compat.md."""

import types

import pytest

import graphflow as tf
from graphflow.tf1.namespace import NotImplementedInGraphflow, PublicNamespace
from graphflow.tools.compat_doc import INTERNAL_PACKAGES

# names that only an implementation module would show (imports of helpers)
_LEAKS = {"np", "numpy", "numbers", "math", "os", "re", "sys", "types", "importlib", "collections",
          "array_ops", "math_ops", "nn_ops", "shape_ops", "conv_ops", "dtypes", "registry"}


def _namespaces():
    found, queue = [], [("tf", tf)]
    seen = {id(tf)}
    while queue:
        path, module = queue.pop(0)
        names = [n for n in dir(module) if not n.startswith("_")] if module is tf else \
            list(dir(module))
        for name in names:
            if module is tf and name in INTERNAL_PACKAGES:
                continue
            if module is tf and name == "python":
                continue  # tensorflow.python.* paths re-export implementation modules, as TF's do

            value = getattr(module, name)
            if isinstance(value, types.ModuleType) and id(value) not in seen:
                seen.add(id(value))
                found.append((f"{path}.{name}", value))
                queue.append((f"{path}.{name}", value))
    return found


NAMESPACES = _namespaces()


def test_the_namespaces_are_found():
    paths = {p for p, _ in NAMESPACES}
    assert {"tf.nn", "tf.layers", "tf.train", "tf.losses", "tf.random", "tf.strings"} <= paths


@pytest.mark.parametrize("path, module", NAMESPACES, ids=[p for p, _ in NAMESPACES])
def test_public_modules_list_only_their_api(path, module):
    assert isinstance(module, PublicNamespace) or hasattr(module, "__all__"), (
        f"{path} is a plain module: wrap it in graphflow.tf1.namespace.PublicNamespace so that it "
        "exports only its __all__")
    public = [n for n in dir(module) if not n.startswith("_")]
    listed = set(module.__all__)
    assert set(public) <= listed, f"{path} shows names outside __all__: {set(public) - listed}"
    assert not listed & _LEAKS, f"{path} exports helper names {listed & _LEAKS}"
    for name in listed:
        assert not name.startswith("_"), f"{path}.{name} is private"
        value = getattr(module, name)
        assert not isinstance(value, types.ModuleType) or value is tf or \
            isinstance(value, PublicNamespace) or hasattr(value, "__all__"), f"{path}.{name}"


def test_layers_hide_their_imports():
    for leak in ("np", "numbers", "array_ops"):
        assert not hasattr(tf.layers, leak)
    assert tf.layers.dense is not None and "dense" in dir(tf.layers)


@pytest.mark.parametrize("expr, name", [
    (lambda: tf.no_such_thing, "tf.no_such_thing"),
    (lambda: tf.nn.no_such_thing, "tf.nn.no_such_thing"),
    (lambda: tf.train.string_input_producer_x, "tf.train.string_input_producer_x"),
    (lambda: tf.layers.np, "tf.layers.np"),
    (lambda: tf.compat.v1.no_such_thing, "tf.no_such_thing"),
])
def test_unknown_names_point_to_the_compat_page(expr, name):
    with pytest.raises(AttributeError) as info:
        expr()
    head = f"graphflow does not implement {name} (see docs/compat.md)"
    assert str(info.value).startswith(head)
    # then the closest names, where there are any (tests/tf1/test_tf2_idioms.py)
    assert str(info.value)[len(head):] in ("", ". Did you mean tf.train.string_input_producer?")
    assert isinstance(info.value, NotImplementedInGraphflow)


def test_hasattr_and_dunder_probes_behave():
    assert not hasattr(tf, "no_such_thing") and hasattr(tf, "Session")
    with pytest.raises(AttributeError):
        tf.__wrapped__  # noqa: B018 - tools probe dunders; they must get a plain AttributeError


def test_a_namespace_can_be_extended_and_optional_names_name_their_module():
    ns = PublicNamespace("tf.demo", ["graphflow.tf1.random"],
                         optional={"Cell": "graphflow.tf1.no_such_module",
                                   "arg_max": "graphflow.tf1.legacy_ops"})
    assert "normal" in dir(ns) and ns.normal is tf.random.normal
    assert "arg_max" in dir(ns) and ns.arg_max is tf.arg_max  # an optional module that exists
    ns.extra = 3
    assert "extra" in ns.__all__ and ns.extra == 3
    with pytest.raises(AttributeError, match="tf.demo.Cell comes from graphflow.tf1.no_such_module"):
        ns.Cell  # noqa: B018
    assert "Cell" not in dir(ns)


def test_queue_based_input_names_are_the_queue_implementations():
    from graphflow.tf1.data import input_producers, queue_runners
    for name in ("string_input_producer", "shuffle_batch", "batch", "limit_epochs"):
        assert getattr(tf.train, name) is getattr(input_producers, name)
    for name in ("start_queue_runners", "QueueRunner", "Coordinator", "add_queue_runner"):
        assert getattr(tf.train, name) is getattr(queue_runners, name)
    assert tf.queue.FIFOQueue is tf.FIFOQueue and tf.queue.RandomShuffleQueue is \
        tf.RandomShuffleQueue
    assert {"FixedLengthRecordReader", "TFRecordReader", "TextLineReader",
            "WholeFileReader"} <= set(dir(tf))
