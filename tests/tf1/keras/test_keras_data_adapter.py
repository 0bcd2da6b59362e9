"""fit/evaluate/predict from a tf.data.Dataset (with and without steps), from generators
(fit_generator too) and from a tf.keras.utils.Sequence."""

import numpy as np
import pytest

import graphflow as tf


def _blobs(n=600, seed=0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, n)
    centers = np.array([[2.0, 0.0], [-2.0, 1.5], [0.0, -2.5]])
    x = (centers[labels] + rng.randn(n, 2) * 0.5).astype(np.float32)
    return x, labels.astype(np.int64)


def _model():
    tf.keras.backend.clear_session()
    tf.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(2,)),
                                 tf.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_fit_on_repeated_dataset_with_steps_reaches_high_accuracy():
    x, labels = _blobs()
    model = _model()
    dataset = tf.data.Dataset.from_tensor_slices((x, labels)).shuffle(600).batch(32).repeat()
    seen = []
    counter = tf.keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: seen.append(b))
    history = model.fit(dataset, steps_per_epoch=19, epochs=8, verbose=0, callbacks=[counter])
    assert len(seen) == 8 * 19 and seen[:3] == [0, 1, 2]
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    eval_set = tf.data.Dataset.from_tensor_slices((x, labels)).batch(100)
    loss, accuracy = model.evaluate(eval_set, verbose=0)
    assert accuracy > 0.95
    loss_arrays, accuracy_arrays = model.evaluate(x, labels, verbose=0)
    assert loss == pytest.approx(loss_arrays, rel=1e-5)
    assert accuracy == pytest.approx(accuracy_arrays, abs=1e-6)
    predicted = model.predict(tf.data.Dataset.from_tensor_slices(x).batch(64))
    np.testing.assert_allclose(predicted, model.predict(x), rtol=1e-5, atol=1e-6)
    assert model.evaluate(eval_set.repeat(), steps=2, verbose=0)[0] == pytest.approx(
        model.evaluate(x[:200], labels[:200], verbose=0)[0], rel=1e-5)


def test_fit_on_finite_dataset_runs_one_pass_per_epoch_with_validation_dataset():
    x, labels = _blobs()
    model = _model()
    dataset = tf.data.Dataset.from_tensor_slices((x[:500], labels[:500])).batch(50)
    batches = []
    history = model.fit(dataset, epochs=6, verbose=0,
                        validation_data=tf.data.Dataset.from_tensor_slices(
                            (x[500:], labels[500:])).batch(50),
                        callbacks=[tf.keras.callbacks.LambdaCallback(
                            on_batch_end=lambda b, logs: batches.append(logs["size"]))])
    assert batches == [50] * 60          # ten batches an epoch, re-initialized each epoch
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert history.history["val_loss"][-1] < history.history["val_loss"][0]


def test_fit_generator_and_generators_in_fit_evaluate_predict():
    x, labels = _blobs()
    model = _model()

    def batches_forever(batch=30):
        while True:
            for start in range(0, 600, batch):
                yield x[start:start + batch], labels[start:start + batch]

    history = model.fit_generator(batches_forever(), steps_per_epoch=20, epochs=10, verbose=0)
    assert len(history.history["loss"]) == 10
    loss, accuracy = model.evaluate_generator(batches_forever(100), steps=6)
    assert accuracy > 0.95
    assert loss == pytest.approx(model.evaluate(x, labels, verbose=0)[0], rel=1e-5)
    predicted = model.predict_generator((x[i:i + 100] for i in range(0, 600, 100)), steps=6)
    np.testing.assert_allclose(predicted, model.predict(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="steps"):
        model.fit(batches_forever(), epochs=1, verbose=0)


def test_sequence_gives_len_batches_and_hears_epoch_end():
    x, labels = _blobs()
    model = _model()

    class Blobs(tf.keras.utils.Sequence):
        ends = 0

        def __len__(self):
            return 12

        def __getitem__(self, index):
            return x[index * 50:(index + 1) * 50], labels[index * 50:(index + 1) * 50]

        def on_epoch_end(self):
            Blobs.ends += 1

    history = model.fit(Blobs(), epochs=10, verbose=0)
    assert Blobs.ends == 10 and len(history.history["acc"]) == 10
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    loss, accuracy = model.evaluate(Blobs(), verbose=0)
    assert loss == pytest.approx(model.evaluate(x, labels, verbose=0)[0], rel=1e-5)


def test_dataset_with_targets_refuses_y():
    x, labels = _blobs(64)
    model = _model()
    with pytest.raises(ValueError, match="must not be given"):
        model.fit(tf.data.Dataset.from_tensor_slices((x, labels)).batch(8), labels, verbose=0)


def test_deferred_sequential_builds_on_the_first_dataset_batch_and_hears_train_batch_hooks():
    tf.keras.backend.clear_session()
    tf.set_random_seed(0)
    x, labels = _blobs()
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])

    class Counter(tf.keras.callbacks.Callback):
        train_batches = plain_batches = 0

        def on_train_batch_end(self, batch, logs=None):
            Counter.train_batches += 1

    class Plain:                                  # duck-typed: only on_batch_end
        batches = 0

        def on_batch_end(self, batch, logs=None):
            Plain.batches += 1

    dataset = tf.data.Dataset.from_tensor_slices(({"features": x}, labels)).batch(60)
    model.fit(dataset.map(lambda f, y: (f["features"], y)), epochs=2, verbose=0,
              callbacks=[Counter(), Plain()])
    assert model.inputs[0].shape.as_list() == [None, 2]
    assert Counter.train_batches == 20 and Plain.batches == 20


def test_steps_past_the_end_of_a_dataset_end_the_epoch_and_generator_validation(capsys):
    x, labels = _blobs()
    model = _model()
    batches = []

    def validation():
        while True:
            for i in range(0, 100, 25):
                yield x[500 + i:525 + i], labels[500 + i:525 + i]

    history = model.fit(
        tf.data.Dataset.from_tensor_slices((x[:500], labels[:500])).batch(50),
        steps_per_epoch=15, epochs=2, verbose=0, validation_data=validation(),
        validation_steps=4, callbacks=[tf.keras.callbacks.LambdaCallback(
            on_batch_end=lambda b, logs: batches.append(b))])
    assert capsys.readouterr().out.count("ran out of data after 10 of 15 steps") == 2
    assert batches == list(range(10)) * 2            # re-initialized for the second epoch
    assert history.history["val_loss"][-1] == pytest.approx(
        model.evaluate(x[500:], labels[500:], verbose=0)[0], rel=1e-5)
    exhausted = iter([(x[:10], labels[:10])])
    with pytest.raises(ValueError, match="no batch"):
        model.fit(x, labels, epochs=2, verbose=0, validation_data=exhausted,
                  validation_steps=1)
