"""`tf.train.summary_iterator(path)`: the `Event` protos of a TensorBoard event file, read with
graphflow's TFRecord reader (checksums verified) and TensorBoard's own `Event` class.

    for event in tf.train.summary_iterator(path):
        for value in event.summary.value:
            print(event.step, value.tag, value.simple_value)
"""

from graphflow.fileformat.summary_encoding import protos
from graphflow.fileformat.tfrecord import tf_record_iterator


def summary_iterator(path):
    """Yield each record of the event file `path` parsed as an `Event`."""
    event_class = protos().event_pb2.Event
    for record in tf_record_iterator(path):
        yield event_class.FromString(record)


__all__ = ["summary_iterator"]
