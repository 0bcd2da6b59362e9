"""A Keras program run the same under graphflow and TF1-style tf_keras (legacy, OptimizerV2
optimizers) to compare the Keras optimizers' updates over several steps; keras_optimizer_recorded.py
holds what TensorFlow returned."""


def keras_optimizer_program(tf, np, optimizer="adagrad"):
    """A small MLP fit for 3 epochs of 4 batches each: the epoch losses and final weights."""
    rng = np.random.RandomState(11)
    x = rng.randn(32, 4).astype(np.float32)
    y = (x[:, :2] * [1.0, -0.5]).sum(1, keepdims=True).astype(np.float32)
    w1 = (rng.randn(4, 6) * 0.5).astype(np.float32)
    w2 = (rng.randn(6, 1) * 0.5).astype(np.float32)
    optimizers = getattr(tf.keras.optimizers, "legacy", tf.keras.optimizers)
    make = {"adagrad": lambda: optimizers.Adagrad(0.1),
            "adadelta": lambda: optimizers.Adadelta(1.0, rho=0.9),
            "adamax": lambda: optimizers.Adamax(0.02),
            "nadam": lambda: optimizers.Nadam(0.01),
            "ftrl": lambda: optimizers.Ftrl(0.1, l1_regularization_strength=0.001,
                                            l2_regularization_strength=0.01)}[optimizer]
    with tf.Graph().as_default():
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(6, activation="tanh", input_shape=(4,),
                                  kernel_initializer=tf.constant_initializer(w1)),
            tf.keras.layers.Dense(1, kernel_initializer=tf.constant_initializer(w2))])
        model.compile(optimizer=make(), loss="mse")
        history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        weights = model.get_weights()
    return {"loss": np.array(history.history["loss"]), "w1": weights[0], "b1": weights[1],
            "w2": weights[2], "b2": weights[3]}
