"""`tf.keras.callbacks.TensorBoard`: the epoch's logs (and, with update_freq='batch' or a number
of samples, the batches' logs) as scalar summaries in TensorBoard event files under `log_dir`,
written by graphflow's `tf.summary.FileWriter` (the graph too with `write_graph`). Training
scalars are tagged by their log names ('loss', 'acc', 'val_loss', ...) at the epoch index, as
TF 1.15 Keras wrote them; batch scalars as 'batch_<name>' at the count of samples seen."""

from graphflow.fileformat.summary_encoding import protos
from graphflow.tf1.keras.training_utils import Callback
from graphflow.tf1.summary.writer import FileWriter


class TensorBoard(Callback):
    """`TensorBoard(log_dir='./logs', write_graph=True, update_freq='epoch')`; histograms,
    images and embeddings are not written."""

    def __init__(self, log_dir="./logs", histogram_freq=0, batch_size=32, write_graph=True,
                 write_grads=False, write_images=False, embeddings_freq=0,
                 embeddings_layer_names=None, embeddings_metadata=None, embeddings_data=None,
                 update_freq="epoch", profile_batch=2, **kwargs):
        super().__init__()
        if histogram_freq or write_grads or write_images or embeddings_freq:
            raise NotImplementedError("TensorBoard: histograms, gradients, images and "
                                      "embeddings are not written")
        self.log_dir, self.write_graph = log_dir, write_graph
        self.update_freq = update_freq
        self.writer, self.samples_seen, self.samples_since_write = None, 0, 0

    def _write(self, logs, step, prefix=""):
        summary_pb2 = protos().summary_pb2
        values = [summary_pb2.Summary.Value(tag=prefix + name, simple_value=float(value))
                  for name, value in logs.items()
                  if name not in ("batch", "size") and isinstance(value, (int, float))]
        self.writer.add_summary(summary_pb2.Summary(value=values), step)
        self.writer.flush()

    def on_train_begin(self, logs=None):
        graph = None
        if self.write_graph and getattr(self.model, "inputs", None):
            graph = self.model.inputs[0].graph
        self.writer = FileWriter(self.log_dir, graph=graph)

    def on_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch" or self.writer is None:
            return
        logs = logs or {}
        size = logs.get("size", 1)
        self.samples_seen += size
        self.samples_since_write += size
        every = 1 if self.update_freq == "batch" else int(self.update_freq)
        if self.update_freq == "batch" or self.samples_since_write >= every:
            self._write(logs, self.samples_seen, "batch_")
            self.samples_since_write = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.writer is not None:
            self._write(logs or {}, epoch, "epoch_" if self.update_freq != "epoch" else "")

    def on_train_end(self, logs=None):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


__all__ = ["TensorBoard"]
