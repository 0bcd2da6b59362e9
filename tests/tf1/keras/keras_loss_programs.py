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


def keras_metrics_program(tf, np):
    """Every metric class over two batches (one with sample weights), its result, and after
    reset_states one more batch; then metric objects in compile/fit/evaluate."""
    K = tf.keras.backend
    M = tf.keras.metrics
    rng = np.random.RandomState(4)
    logits = rng.randn(2, 6, 4).astype(np.float32)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    labels = rng.randint(0, 4, (2, 6))
    onehot = np.eye(4, dtype=np.float32)[labels]
    scores = rng.rand(2, 6, 3).astype(np.float32)
    truth = (rng.rand(2, 6, 3) < scores).astype(np.float32)
    weights = np.array([1.0, 0.0, 2.0, 0.5, 1.0, 3.0], np.float32)
    out = {}
    with tf.Graph().as_default():
        cases = {
            "mean": (M.Mean(), lambda b: (K.constant(logits[b]),)),
            "accuracy": (M.Accuracy(), lambda b: (K.constant(labels[b]),
                                                  K.constant(np.argmax(probs[b], -1)))),
            "binary_accuracy": (M.BinaryAccuracy(threshold=0.4),
                                lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "categorical_accuracy": (M.CategoricalAccuracy(),
                                     lambda b: (K.constant(onehot[b]), K.constant(probs[b]))),
            "sparse_categorical_accuracy": (
                M.SparseCategoricalAccuracy(),
                lambda b: (K.constant(labels[b][:, None]), K.constant(probs[b]))),
            "top_k": (M.TopKCategoricalAccuracy(k=2),
                      lambda b: (K.constant(onehot[b]), K.constant(probs[b]))),
            "sparse_top_k": (M.SparseTopKCategoricalAccuracy(k=2),
                             lambda b: (K.constant(labels[b]), K.constant(probs[b]))),
            "mse": (M.MeanSquaredError(), lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "mae": (M.MeanAbsoluteError(), lambda b: (K.constant(truth[b]),
                                                      K.constant(scores[b]))),
            "precision": (M.Precision(), lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "precision_thresholds": (M.Precision(thresholds=[0.2, 0.5, 0.9]),
                                     lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "precision_class": (M.Precision(class_id=1),
                                lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "recall": (M.Recall(), lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "recall_thresholds": (M.Recall(thresholds=[0.3, 0.7]),
                                  lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "auc": (M.AUC(), lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "auc_50": (M.AUC(num_thresholds=50, summation_method="minoring"),
                       lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "auc_majoring": (M.AUC(num_thresholds=20, summation_method="majoring"),
                             lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
            "auc_pr": (M.AUC(curve="PR"), lambda b: (K.constant(truth[b]),
                                                     K.constant(scores[b]))),
            "auc_pr_minoring": (M.AUC(num_thresholds=30, curve="PR", summation_method="minoring"),
                                lambda b: (K.constant(truth[b]), K.constant(scores[b]))),
        }
        session = K.get_session()
        for key, (metric, batch) in cases.items():
            first = metric.update_state(*batch(0))
            second = metric.update_state(*batch(1), sample_weight=K.constant(weights))
            session.run(tf.variables_initializer(metric.variables))
            session.run(first)
            out[key + "/one"] = session.run(metric.result())
            session.run(second)
            out[key + "/two"] = session.run(metric.result())
            metric.reset_states()
            out[key + "/reset"] = session.run(metric(*batch(1)))
    x = rng.randn(48, 5).astype(np.float32)
    y = (x[:, :1] + 0.3 * x[:, 1:2] > 0).astype(np.float32)
    w = (rng.randn(5, 1) * 0.3).astype(np.float32)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            1, activation="sigmoid", input_shape=(5,), kernel_initializer=tf.constant_initializer(w))])
        model.compile(tf.keras.optimizers.SGD(0.5), tf.keras.losses.BinaryCrossentropy(),
                      metrics=[M.AUC(name="auc"), M.Precision(name="precision"),
                               M.BinaryAccuracy(name="bin_acc")])
        history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        for name in ("loss", "auc", "precision", "bin_acc"):
            out["fit/" + name] = np.array(history.history[name])
        out["evaluate"] = np.array(model.evaluate(x[:20], y[:20], batch_size=8, verbose=0))
    return out
