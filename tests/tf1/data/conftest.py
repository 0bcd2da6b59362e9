"""Helpers for the tf.data tests: run an iterator to its end the way TF1 code does."""

import pytest

import graphflow as tf


def run_to_end(sess, next_element, limit=10_000):
    """Every element `next_element` yields in `sess` until OutOfRangeError (bounded)."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(next_element))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError(f"the iterator did not end within {limit} elements")


@pytest.fixture
def elements():
    """elements(dataset) -> the list of its elements, read through a one-shot iterator."""
    def read(dataset):
        next_element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            return run_to_end(sess, next_element)
    return read


@pytest.fixture
def values():
    """values(dataset) -> its scalar elements as Python numbers (for sequence comparisons)."""
    def read(dataset):
        next_element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            return [v.item() for v in run_to_end(sess, next_element)]
    return read
