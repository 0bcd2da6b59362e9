"""TF1's queue-based input names (graphflow/tf1/data/queue_runners.py): clear errors that show the
tf.data equivalent; start_queue_runners and Coordinator work as in a graph without queues."""

import threading

import pytest

import graphflow as tf


@pytest.mark.parametrize("name", ["shuffle_batch", "batch", "string_input_producer",
                                  "slice_input_producer", "QueueRunner", "add_queue_runner"])
def test_queue_api_points_to_tf_data(name):
    with pytest.raises(NotImplementedError, match=r"tf\.data.*from_tensor_slices"):
        getattr(tf.train, name)([1, 2], 2)


def test_start_queue_runners_and_coordinator():
    coord = tf.train.Coordinator()
    with tf.Session() as sess:
        assert tf.train.start_queue_runners(sess=sess, coord=coord) == []
    seen = []

    def work():
        with coord.stop_on_exception():
            while not coord.should_stop():
                seen.append(1)
                if len(seen) >= 3:
                    raise ValueError("worker failed")

    thread = threading.Thread(target=work)
    thread.start()
    with pytest.raises(ValueError, match="worker failed"):
        coord.join([thread])
    assert coord.should_stop() and len(seen) == 3
