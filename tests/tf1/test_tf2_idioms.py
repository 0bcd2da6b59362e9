"""A name graphflow lacks says what to do: TensorFlow 2's eager idioms (`tf.function`,
`tf.GradientTape`, `t.numpy()`) say what to write instead, and a misspelt `tf.X` or `tf.module.X`
names the closest names there are. Both stay AttributeErrors, so `hasattr` is False, and a miss
imports nothing more than it did."""

import json
import os
import subprocess
import sys

import pytest

import graphflow as tf
from graphflow.framework.errors import NotImplementedInGraphflow
from graphflow.tf1 import tf2_idioms

_TF2_PAGE = "(see docs/compat.md#coming-from-tensorflow-2)"


def _message(expr):
    with pytest.raises(AttributeError) as info:
        expr()
    assert isinstance(info.value, NotImplementedInGraphflow)
    return str(info.value)


def test_tf_function_and_gradient_tape_are_there():
    from graphflow.engine.eager_function import function
    from graphflow.engine.tape import GradientTape
    assert tf.function is function and tf.GradientTape is GradientTape
    assert "tf.function" not in tf2_idioms.IDIOMS and "tf.GradientTape" not in tf2_idioms.IDIOMS


@pytest.mark.parametrize("make", [lambda: tf.constant([1.0, 2.0]), lambda: tf.Variable(1.0)],
                         ids=["Tensor", "Variable"])
def test_numpy_on_a_graph_value_says_to_run_it_in_a_session(make):
    value = make()
    kind = type(value).__name__
    var = kind[0].lower()
    with pytest.raises(AttributeError) as info:
        value.numpy()
    assert isinstance(info.value, NotImplementedInGraphflow)
    assert str(info.value) == (
        f"graphflow does not implement {kind}.numpy() in graph mode: a {kind} of a graph has a "
        f"value only when the graph runs: run it in a Session: `sess.run({var})`, or "
        f"`{var}.eval()` inside `with tf.Session() as sess:`; or call "
        "tf.enable_eager_execution() at program start, and ops return values " + _TF2_PAGE)
    assert not hasattr(value, "numpy")  # duck-typing code takes the graph-value path


def test_the_other_tf2_names_and_the_compat_and_config_ones():
    assert "tf.placeholder(dtype, shape)" in _message(lambda: tf.TensorSpec)
    assert "`import graphflow as tf`" in _message(lambda: tf.compat.v2)
    assert "`tf.print`" in _message(lambda: tf.config.run_functions_eagerly)
    assert "`f.python_function`" in _message(lambda: tf.config.run_functions_eagerly)
    for name in tf2_idioms.IDIOMS:  # every entry is a name graphflow indeed lacks
        parent, _, attr = name.rpartition(".")
        namespace = tf
        for part in parent.split(".")[1:]:
            namespace = getattr(namespace, part)
        assert not hasattr(namespace, attr), name


@pytest.mark.parametrize("expr, suggestion", [
    (lambda: tf.nn.relu6x, "tf.nn.relu6"),
    (lambda: tf.reduce_sun, "tf.reduce_sum"),
    (lambda: tf.placeholdr, "tf.placeholder"),
    (lambda: tf.Sesion, "tf.Session"),                      # a lazily loaded name
    (lambda: tf.session, "tf.Session"),                     # case differs
    (lambda: tf.train.AdamOptimiser, "tf.train.AdamOptimizer"),
    (lambda: tf.keras.layers.Conv2d, "tf.keras.layers.Conv2D"),
    (lambda: tf.layers.Dense2, "tf.layers.Dense"),
    (lambda: tf.compat.as_byte, "tf.compat.as_bytes"),
])
def test_a_misspelt_name_suggests_the_closest_one(expr, suggestion):
    name = suggestion.rpartition(".")[0]
    message = _message(expr)
    assert message.startswith(f"graphflow does not implement {name}.")
    assert message.endswith(f"(see docs/compat.md). Did you mean {suggestion}?")


def test_several_equally_close_names_are_all_offered_and_far_ones_none():
    assert _message(lambda: tf.nn.softmax_cross_entropy).endswith(
        "Did you mean tf.nn.softmax_cross_entropy_with_logits or "
        "tf.nn.softmax_cross_entropy_with_logits_v2?")
    assert _message(lambda: tf.xyzzy) == "graphflow does not implement tf.xyzzy (see docs/compat.md)"


def test_a_hint_comes_before_the_suggestion():
    message = _message(lambda: tf.contrib.layer)
    assert message.startswith("graphflow does not implement tf.contrib.layer (see docs/compat.md); "
                              "graphflow provides tf.contrib.layers")
    assert message.endswith(" only. Did you mean tf.contrib.layers?")


def test_a_python_that_suggests_names_itself_is_kept_from_doing_it_twice():
    with pytest.raises(AttributeError) as info:
        tf.nn.relu6x  # noqa: B018
    assert info.value.obj is None  # Python 3.13 fills in `name` (and suggests) only when unset


def test_hasattr_probes_do_not_compute_suggestions(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("suggestions computed for a hasattr probe")
    monkeypatch.setattr(NotImplementedInGraphflow, "suggestions", fail)
    assert not hasattr(tf, "reduce_sun") and not hasattr(tf.nn, "relu6x")


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__))))


def test_a_top_level_miss_and_its_message_import_no_subsystem():
    """The candidates of `tf.X` are the names the package already has (its globals and the
    lazily loaded names), so showing the suggestion loads nothing but difflib."""
    code = ("import sys, json\nimport graphflow as tf\nbefore = set(sys.modules)\n"
            "try:\n    tf.Sesion\nexcept AttributeError as e:\n    message = str(e)\n"
            "print(json.dumps([message, sorted(set(sys.modules) - before)]))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    message, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert message.endswith("Did you mean tf.Session?")
    assert not [m for m in loaded if m.startswith("graphflow")], loaded
    assert set(loaded) <= {"difflib", "heapq", "_heapq"}, loaded
