"""Premade estimators: the iris-style DNNClassifier / LinearClassifier tutorial program on
synthetic three-class data, binary classification with a label vocabulary and weights,
regression with DNNRegressor / LinearRegressor / the combined model, predictions and metrics."""

import numpy as np
import pytest

import graphflow as tf

_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]
_CENTERS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])


# The networks' initial weights come from a seeded graph, so each accuracy below is the same in
# every run. Unseeded they vary: train_and_evaluate's [10]-unit classifier ended at 0.76-0.83 for
# graph seeds 1 and 7 (0.9 asked) and above 0.9 for 2-5, and it failed CI once unseeded.
SEEDED = tf.estimator.RunConfig(tf_random_seed=2)


def _iris(n, seed):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n)
    x = _CENTERS[y] + rng.randn(n, 4) * 0.3
    return {name: x[:, i] for i, name in enumerate(_NAMES)}, y


def _train_input_fn(features, labels, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    return dataset.shuffle(1000, seed=1).repeat().batch(batch_size)


def _eval_input_fn(features, labels, batch_size):
    inputs = dict(features) if labels is None else (dict(features), labels)
    return tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)


@pytest.mark.parametrize("make", [
    lambda cols, d: tf.estimator.DNNClassifier(feature_columns=cols, hidden_units=[10, 10],
                                               n_classes=3, model_dir=d, config=SEEDED),
    lambda cols, d: tf.estimator.LinearClassifier(feature_columns=cols, n_classes=3,
                                                  model_dir=d)], ids=["dnn", "linear"])
def test_iris_tutorial_program(make, tmp_path):
    train_x, train_y = _iris(240, 0)
    test_x, test_y = _iris(60, 1)
    columns = [tf.feature_column.numeric_column(key=key) for key in train_x]
    classifier = make(columns, str(tmp_path))
    before = classifier.evaluate(input_fn=lambda: _eval_input_fn(test_x, test_y, 100))
    classifier.train(input_fn=lambda: _train_input_fn(train_x, train_y, 100), steps=300)
    result = classifier.evaluate(input_fn=lambda: _eval_input_fn(test_x, test_y, 100))
    assert set(result) == {"accuracy", "average_loss", "loss", "global_step"}
    assert result["global_step"] == 300
    assert result["accuracy"] > 0.9 and before["accuracy"] < 0.7
    assert result["average_loss"] < before["average_loss"] / 2
    # loss: the per-batch SUM (60 examples in one batch), average_loss: the per-example mean
    np.testing.assert_allclose(result["loss"], 60 * result["average_loss"], rtol=1e-4)
    predictions = list(classifier.predict(
        input_fn=lambda: _eval_input_fn(test_x, None, 100)))
    assert len(predictions) == 60
    assert set(predictions[0]) == {"logits", "probabilities", "class_ids", "classes"}
    class_ids = np.array([p["class_ids"][0] for p in predictions])
    assert np.mean(class_ids == test_y) == pytest.approx(result["accuracy"])
    probabilities = np.stack([p["probabilities"] for p in predictions])
    cross_entropy = -np.log(probabilities[np.arange(60), test_y])
    np.testing.assert_allclose(result["average_loss"], cross_entropy.mean(), rtol=1e-4)
    first = predictions[0]
    np.testing.assert_allclose(first["probabilities"].sum(), 1.0, rtol=1e-5)
    assert first["classes"][0] in (str(first["class_ids"][0]),
                                   str(first["class_ids"][0]).encode())
    names = classifier.get_variable_names()
    prefix = "dnn/hiddenlayer_0/kernel" if "dnn/logits/kernel" in names else \
        "linear/linear_model/PetalLength/weights"
    assert prefix in names


def test_binary_classifier_with_vocabulary_weights_and_numpy_input(tmp_path):
    rng = np.random.RandomState(2)
    x = rng.randn(200, 2).astype(np.float32)
    color = rng.choice(["red", "green", "blue"], 200)
    labels = np.where(x[:, 0] + (color == "red") * 1.5 - 0.5 > 0, "yes", "no")
    features = {"x": x, "color": color, "w": np.ones(200, np.float32)}
    columns = [tf.feature_column.numeric_column("x", shape=2),
               tf.feature_column.embedding_column(
                   tf.feature_column.categorical_column_with_vocabulary_list(
                       "color", ["red", "green", "blue"]), 2)]
    classifier = tf.estimator.DNNClassifier([8], columns, model_dir=str(tmp_path), config=SEEDED,
                                            label_vocabulary=["no", "yes"], weight_column="w",
                                            optimizer=lambda: tf.train.AdamOptimizer(0.05))
    classifier.train(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=50, num_epochs=None, shuffle=True), steps=200)
    result = classifier.evaluate(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=200, shuffle=False))
    assert result["accuracy"] > 0.9
    assert {"auc", "auc_precision_recall", "precision", "recall", "label/mean",
            "prediction/mean", "accuracy_baseline"} <= set(result)
    assert result["auc"] > 0.95
    np.testing.assert_allclose(result["label/mean"], np.mean(labels == "yes"), rtol=1e-5)
    predictions = next(classifier.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": x[:1], "color": color[:1], "w": np.ones(1, np.float32)}, shuffle=False)))
    assert set(predictions) == {"logits", "logistic", "probabilities", "class_ids", "classes"}
    expected = ["no", "yes"][predictions["class_ids"][0]]
    assert predictions["classes"][0] in (expected, expected.encode())


def _regression_data(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    kind = rng.randint(0, 4, n)
    y = x @ np.array([1.5, -2.0, 0.5], np.float32) + np.array([0.0, 1.0, -1.0, 2.0])[kind]
    return {"x": x, "kind": kind}, y.astype(np.float32)


@pytest.mark.parametrize("make", [
    lambda cols, d: tf.estimator.DNNRegressor([16], cols, model_dir=d),
    lambda cols, d: tf.estimator.LinearRegressor(cols, model_dir=d),
    lambda cols, d: tf.estimator.DNNLinearCombinedRegressor(
        model_dir=d, linear_feature_columns=cols, dnn_feature_columns=cols,
        dnn_hidden_units=[8])], ids=["dnn", "linear", "combined"])
def test_regressors_reduce_loss(make, tmp_path):
    features, y = _regression_data(256, 3)
    kind = tf.feature_column.categorical_column_with_identity("kind", 4)
    columns = [tf.feature_column.numeric_column("x", shape=3),
               tf.feature_column.indicator_column(kind)]
    regressor = make(columns, str(tmp_path))
    eval_input = tf.estimator.inputs.numpy_input_fn(features, y, batch_size=256, shuffle=False)
    before = regressor.evaluate(eval_input)
    regressor.train(tf.estimator.inputs.numpy_input_fn(features, y, batch_size=32,
                                                       num_epochs=None, shuffle=True), steps=300)
    after = regressor.evaluate(eval_input)
    assert set(after) == {"average_loss", "loss", "label/mean", "prediction/mean", "global_step"}
    assert after["average_loss"] < 0.25 * before["average_loss"]
    np.testing.assert_allclose(after["label/mean"], y.mean(), rtol=1e-5)
    predictions = list(regressor.predict(tf.estimator.inputs.numpy_input_fn(
        features, batch_size=64, shuffle=False)))
    assert len(predictions) == 256 and set(predictions[0]) == {"predictions"}
    got = np.array([p["predictions"][0] for p in predictions])
    np.testing.assert_allclose(np.mean((got - y) ** 2), after["average_loss"], rtol=1e-4)


def test_combined_classifier_and_optimizer_choices(tmp_path):
    features, y = _iris(150, 4)
    columns = [tf.feature_column.numeric_column(key=key) for key in features]
    classifier = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=columns, dnn_feature_columns=columns,
        dnn_hidden_units=[10], n_classes=3, dnn_optimizer="Adam", config=SEEDED)
    classifier.train(lambda: _train_input_fn(features, y, 50), steps=200)
    assert classifier.evaluate(lambda: _eval_input_fn(features, y, 150))["accuracy"] > 0.9
    names = classifier.get_variable_names()
    assert any(n.startswith("linear/") for n in names) and any(n.startswith("dnn/") for n in names)
    with pytest.raises(ValueError, match="Unsupported optimizer"):
        tf.estimator.DNNClassifier([4], columns, optimizer="Nope")
    with pytest.raises(ValueError, match="label_vocabulary"):
        tf.estimator.LinearClassifier(columns, n_classes=3, label_vocabulary=["a", "b"])


def test_linear_classifier_over_categorical_columns_census_style(tmp_path):
    rng = np.random.RandomState(5)
    n = 400
    age = rng.uniform(18, 80, n).astype(np.float32)
    education = rng.choice(["Bachelors", "HS-grad", "Masters", "Doctorate"], n)
    occupation = rng.choice([f"job{i}" for i in range(12)], n)
    score = (age > 40) * 1.0 + np.isin(education, ["Masters", "Doctorate"]) * 1.5 \
        + np.isin(occupation, ["job1", "job2", "job3"]) * 1.0
    label = (score >= 1.5).astype(np.int64)
    features = {"age": age, "education": education, "occupation": occupation}
    age_buckets = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("age"), [25, 30, 35, 40, 45, 50, 55, 60, 65])
    edu = tf.feature_column.categorical_column_with_vocabulary_list(
        "education", ["Bachelors", "HS-grad", "Masters", "Doctorate"])
    occ = tf.feature_column.categorical_column_with_hash_bucket("occupation", 100)
    columns = [age_buckets, edu, occ, tf.feature_column.crossed_column([edu, "occupation"], 200)]
    classifier = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path))
    train_input = tf.estimator.inputs.numpy_input_fn(features, label, batch_size=40,
                                                     num_epochs=None, shuffle=True)
    eval_input = tf.estimator.inputs.numpy_input_fn(features, label, batch_size=400,
                                                    shuffle=False)
    before = classifier.evaluate(eval_input)
    classifier.train(train_input, steps=300)
    after = classifier.evaluate(eval_input)
    assert after["accuracy"] > 0.95 and after["auc"] > 0.97
    assert after["average_loss"] < before["average_loss"] / 2
    names = classifier.get_variable_names()
    assert "linear/linear_model/education/weights" in names
    assert "linear/linear_model/education/weights/Ftrl" in names


def test_dnn_batch_norm_updates_moving_statistics(tmp_path):
    features, y = _regression_data(128, 6)
    columns = [tf.feature_column.numeric_column("x", shape=3)]
    regressor = tf.estimator.DNNRegressor([8], columns, model_dir=str(tmp_path), batch_norm=True,
                                          dropout=0.1)
    regressor.train(tf.estimator.inputs.numpy_input_fn(features, y, batch_size=32,
                                                       num_epochs=None, shuffle=True), steps=20)
    moving = [n for n in regressor.get_variable_names() if n.endswith("moving_mean")]
    assert moving
    assert np.abs(regressor.get_variable_value(moving[0])).max() > 0


def test_baseline_estimators_learn_the_label_distribution(tmp_path):
    rng = np.random.RandomState(7)
    labels = (rng.uniform(size=200) < 0.8).astype(np.int64)
    features = {"x": rng.randn(200).astype(np.float32)}
    classifier = tf.estimator.BaselineClassifier(model_dir=str(tmp_path / "c"))
    classifier.train(tf.estimator.inputs.numpy_input_fn(features, labels, batch_size=50,
                                                        num_epochs=None, shuffle=True), steps=200)
    prediction = next(classifier.predict(tf.estimator.inputs.numpy_input_fn(
        features, shuffle=False)))
    assert prediction["logistic"][0] == pytest.approx(labels.mean(), abs=0.05)
    assert classifier.get_variable_names()[0] == "baseline/bias"
    targets = (3.0 + rng.randn(200)).astype(np.float32)
    regressor = tf.estimator.BaselineRegressor(model_dir=str(tmp_path / "r"),
                                               optimizer="Adagrad")
    regressor.train(tf.estimator.inputs.numpy_input_fn(features, targets, batch_size=50,
                                                       num_epochs=None, shuffle=True), steps=300)
    prediction = next(regressor.predict(tf.estimator.inputs.numpy_input_fn(
        features, shuffle=False)))
    assert prediction["predictions"][0] == pytest.approx(targets.mean(), abs=0.2)


def test_train_and_evaluate_in_rounds(tmp_path):
    features, y = _iris(150, 8)
    columns = [tf.feature_column.numeric_column(key=key) for key in features]
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=120,
                                    tf_random_seed=SEEDED.tf_random_seed)
    classifier = tf.estimator.DNNClassifier([10], columns, n_classes=3, config=config)
    seen = []

    class Count(tf.train.SessionRunHook):
        def end(self, session):
            seen.append(session.run(tf.train.get_global_step()))

    train_spec = tf.estimator.TrainSpec(lambda: _train_input_fn(features, y, 50), max_steps=300)
    eval_spec = tf.estimator.EvalSpec(lambda: _eval_input_fn(features, y, 50), steps=None,
                                      hooks=[Count()])
    result, exports = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    assert seen == [120, 240, 300] and exports == []
    assert result["global_step"] == 300 and result["accuracy"] > 0.9
    with pytest.raises(TypeError, match="TrainSpec"):
        tf.estimator.train_and_evaluate(classifier, eval_spec, eval_spec)
