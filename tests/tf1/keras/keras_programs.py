"""Keras programs run the same under graphflow (`tf` = graphflow) and TF1's tf.keras
(`tf` = tensorflow.compat.v1 with legacy Keras), for tests/tf1/keras/test_keras_against_tf1.py. Weights
start from seeded numpy arrays (constant initializers) and `fit` does not shuffle, so both
frameworks see the same numbers. Each program is self-contained: only its source is sent to the
TensorFlow process."""


def keras_mlp(tf, np, optimizer="adam", loss="categorical_crossentropy", epochs=2):
    """A two-layer MLP compiled with `optimizer` and `loss`, fit without shuffling."""
    rng = np.random.RandomState(3)
    x = rng.randn(96, 5).astype(np.float32)
    labels = (x[:, 0] - x[:, 2] + 0.5 * x[:, 4] > 0).astype(np.int64)
    w1 = (rng.randn(5, 8) * 0.4).astype(np.float32)
    b1 = (rng.randn(8) * 0.1).astype(np.float32)
    units = 1 if loss in ("binary_crossentropy", "mse") else 2
    w2 = (rng.randn(8, units) * 0.4).astype(np.float32)
    activation = {"categorical_crossentropy": "softmax", "sparse_categorical_crossentropy":
                  "softmax", "binary_crossentropy": "sigmoid", "mse": None}[loss]
    if loss == "categorical_crossentropy":
        y = np.eye(2, dtype=np.float32)[labels]
    elif loss == "sparse_categorical_crossentropy":
        y = labels
    else:
        y = labels.reshape(-1, 1).astype(np.float32)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(8, activation="relu", input_shape=(5,),
                                  kernel_initializer=tf.constant_initializer(w1),
                                  bias_initializer=tf.constant_initializer(b1)),
            tf.keras.layers.Dense(units, activation=activation,
                                  kernel_initializer=tf.constant_initializer(w2))])
        opt = {"adam": tf.keras.optimizers.Adam(), "sgd": tf.keras.optimizers.SGD(0.1),
               "rmsprop": tf.keras.optimizers.RMSprop(),
               "sgd_momentum": tf.keras.optimizers.SGD(0.05, momentum=0.9)}[optimizer]
        model.compile(optimizer=opt, loss=loss, metrics=["accuracy"])
        history = model.fit(x, y, batch_size=16, epochs=epochs, shuffle=False, verbose=0)
        evaluated = model.evaluate(x, y, batch_size=32, verbose=0)
        predicted = model.predict(x[:10])
        kernel = model.layers[0].get_weights()[0]
    return {"loss": np.array(history.history["loss"]),
            "accuracy": np.array(history.history[[k for k in history.history if "acc" in k][0]]),
            "evaluate": np.array(evaluated), "predict": predicted, "kernel": kernel}


def keras_cnn(tf, np):
    """Conv2D, BatchNormalization, MaxPooling2D, GlobalAveragePooling2D and Dropout in a
    functional model, one epoch of Adam."""
    rng = np.random.RandomState(5)
    x = rng.rand(40, 6, 6, 2).astype(np.float32)
    labels = (x[:, :3].mean(axis=(1, 2, 3)) > x[:, 3:].mean(axis=(1, 2, 3))).astype(np.int64)
    wc = (rng.randn(3, 3, 2, 4) * 0.3).astype(np.float32)
    wd = (rng.randn(4, 3) * 0.5).astype(np.float32)
    with tf.Graph().as_default():
        inputs = tf.keras.Input(shape=(6, 6, 2))
        h = tf.keras.layers.Conv2D(4, 3, padding="same", use_bias=False,
                                   kernel_initializer=tf.constant_initializer(wc))(inputs)
        h = tf.keras.layers.BatchNormalization()(h)
        h = tf.keras.layers.Activation("relu")(h)
        h = tf.keras.layers.MaxPooling2D()(h)
        h = tf.keras.layers.GlobalAveragePooling2D()(h)
        outputs = tf.keras.layers.Dense(3, activation="softmax",
                                        kernel_initializer=tf.constant_initializer(wd))(h)
        model = tf.keras.Model(inputs, outputs)
        model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(x, labels, batch_size=8, epochs=1, shuffle=False, verbose=0)
        evaluated = model.evaluate(x, labels, verbose=0)
        moving_mean = model.layers[2].get_weights()[2]
        moving_variance = model.layers[2].get_weights()[3]
    return {"loss": np.array(history.history["loss"]), "evaluate": np.array(evaluated),
            "moving_mean": moving_mean, "moving_variance": moving_variance}


def keras_lstm(tf, np):
    """Embedding -> LSTM -> Dense trained two epochs with Adam (the LSTM's
    weights from numpy; TF1 Keras's hard_sigmoid recurrent activation named explicitly)."""
    rng = np.random.RandomState(8)
    ids = rng.randint(0, 7, (48, 5))
    y = (ids.sum(axis=1) > 15).astype(np.float32)
    table = (rng.randn(7, 3) * 0.5).astype(np.float32)
    kernel = (rng.randn(3, 16) * 0.4).astype(np.float32)
    recurrent = (rng.randn(4, 16) * 0.4).astype(np.float32)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([
            tf.keras.layers.Embedding(7, 3, input_length=5,
                                      embeddings_initializer=tf.constant_initializer(table)),
            tf.keras.layers.LSTM(4, recurrent_activation="hard_sigmoid",
                                 kernel_initializer=tf.constant_initializer(kernel),
                                 recurrent_initializer=tf.constant_initializer(recurrent)),
            tf.keras.layers.Dense(1, activation="sigmoid",
                                  kernel_initializer=tf.constant_initializer(0.3))])
        model.compile(tf.keras.optimizers.Adam(0.01), "binary_crossentropy",
                      metrics=["accuracy"])
        history = model.fit(ids, y, batch_size=12, epochs=2, shuffle=False, verbose=0)
        predicted = model.predict(ids[:6])
        bias = model.layers[1].get_weights()[2]
    return {"loss": np.array(history.history["loss"]), "predict": predicted, "lstm_bias": bias}


def keras_gru(tf, np, reset_after=False):
    """GRU (TF1 Keras's equations, hard_sigmoid, reset_after as given) -> Dense on fixed numpy
    weights: the GRU's sequences before training, then two epochs with SGD."""
    rng = np.random.RandomState(11)
    x = rng.randn(24, 6, 3).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32).reshape(-1, 1)
    kernel = (rng.randn(3, 15) * 0.5).astype(np.float32)
    recurrent = (rng.randn(5, 15) * 0.5).astype(np.float32)
    bias = (rng.randn(*((2, 15) if reset_after else (15,))) * 0.2).astype(np.float32)
    with tf.Graph().as_default():
        inputs = tf.keras.layers.Input(shape=(6, 3))
        gru = tf.keras.layers.GRU(5, recurrent_activation="hard_sigmoid", reset_after=reset_after,
                                  return_sequences=True)
        sequence = gru(inputs)
        last = tf.keras.layers.Lambda(lambda s: s[:, -1])(sequence)
        outputs = tf.keras.layers.Dense(1, activation="sigmoid",
                                        kernel_initializer=tf.constant_initializer(0.3))(last)
        model = tf.keras.Model(inputs, outputs)
        gru.set_weights([kernel, recurrent, bias])
        sequences = tf.keras.Model(inputs, sequence).predict(x)
        model.compile(tf.keras.optimizers.SGD(0.1), "binary_crossentropy")
        history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        trained = gru.get_weights()
    return {"sequences": sequences, "loss": np.array(history.history["loss"]),
            "kernel": trained[0], "recurrent": trained[1]}


def keras_masked_rnn(tf, np, kind="GRU"):
    """Embedding(mask_zero=True) -> GRU/LSTM (final state) -> Dense over padded id sequences,
    fixed weights, then two epochs with Adam: padding steps must not change the state."""
    rng = np.random.RandomState(12)
    lengths = rng.randint(2, 7, 32)
    ids = np.zeros((32, 7), np.int64)
    for i, n in enumerate(lengths):
        ids[i, 7 - n:] = rng.randint(1, 9, n)          # left padded
        ids[i, :7 - n] = 0
    ids[::3] = np.roll(ids[::3], -1, axis=1)           # some rows padded inside too
    y = (ids.sum(axis=1) > 20).astype(np.float32)
    gates = 3 if kind == "GRU" else 4
    table = (rng.randn(9, 3) * 0.5).astype(np.float32)
    kernel = (rng.randn(3, gates * 4) * 0.4).astype(np.float32)
    recurrent = (rng.randn(4, gates * 4) * 0.4).astype(np.float32)
    with tf.Graph().as_default():
        extra = {"reset_after": False} if kind == "GRU" else {}
        layer = getattr(tf.keras.layers, kind)(
            4, recurrent_activation="hard_sigmoid",
            kernel_initializer=tf.constant_initializer(kernel),
            recurrent_initializer=tf.constant_initializer(recurrent), **extra)
        model = tf.keras.Sequential([
            tf.keras.layers.Embedding(9, 3, input_length=7, mask_zero=True,
                                      embeddings_initializer=tf.constant_initializer(table)),
            layer,
            tf.keras.layers.Dense(1, activation="sigmoid",
                                  kernel_initializer=tf.constant_initializer(0.3))])
        model.compile(tf.keras.optimizers.Adam(0.01), "binary_crossentropy")
        before = model.predict(ids)
        history = model.fit(ids, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        after = model.predict(ids)
    return {"before": before, "after": after, "loss": np.array(history.history["loss"])}
