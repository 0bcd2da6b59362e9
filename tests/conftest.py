"""Shared fixtures: every test starts from a fresh default graph."""

import numpy as np
import pytest

import graphflow as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def rng():
    return np.random.default_rng(0)
