"""Programs over tf.keras.losses' classes and tf.keras.metrics' classes, run the same under
graphflow and TF1-style tf_keras; keras_loss_recorded.py holds what TensorFlow returned."""


def keras_losses_program(tf, np):
    """Every loss class with its options and reductions, with and without sample weights."""
    K = tf.keras.backend
    losses = tf.keras.losses
    rng = np.random.RandomState(3)
    logits = rng.randn(4, 3).astype(np.float32)
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
    binary = (rng.rand(4, 3) > 0.5).astype(np.float32)
    pred = rng.rand(4, 3).astype(np.float32) * 0.9 + 0.05
    reg_true, reg_pred = rng.randn(4, 3).astype(np.float32), rng.randn(4, 3).astype(np.float32)
    weights = np.array([1.0, 0.5, 0.0, 2.0], np.float32)
    out = {}
    with tf.Graph().as_default():
        cases = {
            "cce": (losses.CategoricalCrossentropy(), onehot, probs),
            "cce_logits": (losses.CategoricalCrossentropy(from_logits=True), onehot, logits),
            "cce_smooth": (losses.CategoricalCrossentropy(label_smoothing=0.2), onehot, probs),
            "scce": (losses.SparseCategoricalCrossentropy(), np.array([0, 2, 1, 2]), probs),
            "scce_logits": (losses.SparseCategoricalCrossentropy(from_logits=True),
                            np.array([[0], [2], [1], [2]]), logits),
            "bce": (losses.BinaryCrossentropy(), binary, pred),
            "bce_logits": (losses.BinaryCrossentropy(from_logits=True), binary, logits),
            "bce_smooth": (losses.BinaryCrossentropy(label_smoothing=0.1), binary, pred),
            "mse": (losses.MeanSquaredError(), reg_true, reg_pred),
            "mae": (losses.MeanAbsoluteError(), reg_true, reg_pred),
            "mape": (losses.MeanAbsolutePercentageError(), reg_true, reg_pred),
            "msle": (losses.MeanSquaredLogarithmicError(), np.abs(reg_true), pred),
            "huber": (losses.Huber(), reg_true, reg_pred),
            "huber_delta": (losses.Huber(delta=0.3), reg_true, reg_pred),
            "hinge": (losses.Hinge(), binary, reg_pred),
            "squared_hinge": (losses.SquaredHinge(), binary * 2.0 - 1.0, reg_pred),
            "categorical_hinge": (losses.CategoricalHinge(), onehot, reg_pred),
            "kld": (losses.KLDivergence(), probs[::-1].copy(), probs),
            "poisson": (losses.Poisson(), np.abs(reg_true), pred),
            "log_cosh": (losses.LogCosh(), reg_true, reg_pred),
            "cosine": (losses.CosineSimilarity(), reg_true, reg_pred),
            "cosine_axis0": (losses.CosineSimilarity(axis=0), reg_true, reg_pred),
        }
        tensors = {}
        for key, (loss, y_true, y_pred) in cases.items():
            tensors[key] = loss(K.constant(y_true), K.constant(y_pred))
            if key != "cosine_axis0":       # one loss per column there
                tensors[key + "/weighted"] = loss(K.constant(y_true), K.constant(y_pred),
                                                  sample_weight=K.constant(weights))
        none = losses.MeanSquaredError(reduction="none")
        total = losses.Huber(reduction="sum")
        tensors["reduction_none"] = none(K.constant(reg_true), K.constant(reg_pred))
        tensors["reduction_sum"] = total(K.constant(reg_true), K.constant(reg_pred),
                                         sample_weight=K.constant(weights))
        for name in ("kld", "mape", "msle", "logcosh", "poisson", "squared_hinge",
                     "categorical_hinge", "cosine_similarity", "hinge"):
            tensors["fn_" + name] = losses.get(name)(K.constant(np.abs(reg_true)),
                                                     K.constant(pred))
        out.update(zip(tensors, K.batch_get_value(list(tensors.values()))))
    return out
