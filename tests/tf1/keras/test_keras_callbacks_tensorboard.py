"""tf.keras.callbacks.TensorBoard: epoch scalars (and batch scalars with update_freq='batch')
read back with TensorBoard's own EventAccumulator, the graph written."""

import pytest

import graphflow as tf
from tests.tf1.keras.test_keras_callbacks import _data, _model


def test_tensorboard_writes_epoch_and_batch_scalars(tmp_path):
    accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="tf.summary needs the tensorboard package")
    x, y = _data()
    model = _model()
    history = model.fit(x, y, epochs=3, batch_size=50, verbose=0, validation_split=0.2,
                        callbacks=[tf.keras.callbacks.TensorBoard(str(tmp_path / "epochs"))])
    acc = accumulator.EventAccumulator(str(tmp_path / "epochs"), size_guidance={"scalars": 0})
    acc.Reload()
    assert sorted(acc.Tags()["scalars"]) == ["loss", "val_loss"]
    events = acc.Scalars("val_loss")
    assert [e.step for e in events] == [0, 1, 2]
    assert [e.value for e in events] == pytest.approx(history.history["val_loss"], rel=1e-6)
    assert acc.Tags()["graph"]

    model = _model()
    model.fit(x, y, epochs=2, batch_size=40, verbose=0,
              callbacks=[tf.keras.callbacks.TensorBoard(str(tmp_path / "batches"),
                                                        update_freq="batch")])
    acc = accumulator.EventAccumulator(str(tmp_path / "batches"), size_guidance={"scalars": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("batch_loss")] == list(range(40, 401, 40))
    assert [e.step for e in acc.Scalars("epoch_loss")] == [0, 1]
