"""`tf.flags` / `tf.app.flags` and `tf.app.run`, as TF1 programs use them."""

import pytest

import graphflow as tf
from graphflow.tf1.flags import FlagValues


@pytest.fixture
def flags():
    values = FlagValues()
    tf.flags.DEFINE_string("data_dir", "/tmp/data", "where the data is", flag_values=values)
    tf.flags.DEFINE_integer("batch_size", 32, "batch size", lower_bound=1, flag_values=values)
    tf.flags.DEFINE_float("learning_rate", 0.01, "step size", flag_values=values)
    tf.flags.DEFINE_boolean("fake_data", False, "use fake data", flag_values=values)
    tf.flags.DEFINE_list("layers", "64,32", "layer sizes", flag_values=values)
    tf.flags.DEFINE_enum("mode", "train", ["train", "eval"], "what to do", flag_values=values)
    return values


def test_defaults_and_parsing(flags):
    rest = flags(["prog", "--batch_size=64", "--learning_rate", "0.5", "--fake_data", "input.txt",
                  "--layers=8,4", "--mode=eval", "--unknown=1"])
    assert rest == ["prog", "input.txt", "--unknown=1"]
    assert (flags.data_dir, flags.batch_size, flags.learning_rate, flags.fake_data) == \
        ("/tmp/data", 64, 0.5, True)
    assert flags.layers == ["8", "4"] and flags.mode == "eval"
    flags(["prog", "--nofake_data"])
    assert flags.fake_data is False
    flags(["prog", "--fake_data=true"])
    assert flags.fake_data is True
    flags.batch_size = 7
    assert flags.flag_values_dict()["batch_size"] == 7


def test_bad_values_and_names(flags):
    with pytest.raises(tf.flags.Error, match="--batch_size=0"):
        flags(["prog", "--batch_size=0"])
    with pytest.raises(tf.flags.Error, match="--mode=test"):
        flags(["prog", "--mode=test"])
    with pytest.raises(tf.flags.Error, match="unknown command line flag 'x'"):
        flags(["prog", "--x=1"], known_only=False)
    with pytest.raises(tf.flags.Error, match="defined twice"):
        tf.flags.DEFINE_string("data_dir", "", "", flag_values=flags)
    with pytest.raises(AttributeError, match="no flag named --nope"):
        flags.nope  # noqa: B018


@pytest.fixture
def global_flags():
    """The process-wide FLAGS, emptied for the test and restored after it."""
    saved, parsed = dict(tf.flags.FLAGS._flags), tf.flags.FLAGS.is_parsed()
    tf.flags.FLAGS.reset()
    yield tf.flags.FLAGS
    tf.flags.FLAGS.reset()
    tf.flags.FLAGS._flags.update(saved)
    if parsed:
        tf.flags.FLAGS.mark_as_parsed()


def test_app_flags_is_tf_flags_and_app_run_calls_main(global_flags):
    assert tf.app.flags.DEFINE_integer is tf.flags.DEFINE_integer
    assert tf.app.flags.FLAGS is tf.flags.FLAGS
    tf.app.flags.DEFINE_integer("steps", 10, "training steps")
    seen = []

    def main(argv):
        seen.append((list(argv), tf.app.flags.FLAGS.steps))
        return 0

    with pytest.raises(SystemExit) as info:
        tf.app.run(main=main, argv=["prog", "--steps=3", "extra"])
    assert info.value.code == 0 and seen == [(["prog", "extra"], 3)]


def test_reading_a_flag_parses_sys_argv(monkeypatch, flags):
    monkeypatch.setattr("sys.argv", ["prog", "--batch_size=5"])
    assert flags.batch_size == 5 and flags.is_parsed()


def test_arg_max_and_arg_min():
    x = tf.constant([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    with tf.Session() as sess:
        big, small = sess.run([tf.arg_max(x, 1), tf.arg_min(x, 0)])
    assert big.tolist() == [1, 0] and big.dtype.name == "int64" and small.tolist() == [0, 1, 0]
