"""`tf.logging`: TF1's levels and functions; default verbosity WARN; messages on stderr."""

import pytest

import graphflow as tf


@pytest.fixture(autouse=True)
def restore_verbosity():
    level = tf.logging.get_verbosity()
    yield
    tf.logging.set_verbosity(level)


def test_levels_match_tf1():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
            tf.logging.FATAL) == (10, 20, 30, 40, 50)


def test_verbosity_filters_messages(capsys):
    tf.logging.set_verbosity(tf.logging.WARN)
    tf.logging.info("hidden %d", 1)
    tf.logging.warn("shown %d", 2)
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.logging.info("step %d loss %.2f", 3, 0.5)
    tf.logging.debug("still hidden")
    tf.logging.error("bad")
    err = capsys.readouterr().err
    assert "hidden" not in err and "still hidden" not in err
    assert "WARNING:graphflow:shown 2" in err and "INFO:graphflow:step 3 loss 0.50" in err
    assert "ERROR:graphflow:bad" in err


def test_log_every_n_and_first_n(capsys):
    tf.logging.set_verbosity(tf.logging.INFO)
    for i in range(5):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 2, i)
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "every" in line] == \
        ["INFO:graphflow:every 0", "INFO:graphflow:every 2", "INFO:graphflow:every 4"]
    assert err.count("first") == 2
