"""tf.estimator: Estimator train/evaluate/predict, resume, max_steps, warm start, EstimatorSpec,
RunConfig and numpy_input_fn."""

import itertools

import numpy as np
import pytest

import graphflow as tf

_X = np.random.RandomState(0).randn(40, 3).astype(np.float32)
_Y = (_X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)


def _model_fn(features, labels, mode, params):
    pred = tf.squeeze(tf.layers.dense(features["x"], 1,
                                      kernel_initializer=tf.zeros_initializer()), [1])
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "double": 2 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(params.get("lr", 0.1)).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "mae": tf.metrics.mean_absolute_error(labels, pred)})


def _train_input(batch_size=8):
    return tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=batch_size,
                                              num_epochs=None, shuffle=False)


def _eval_input():
    return tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=10, num_epochs=1,
                                              shuffle=False)


def test_train_resume_evaluate_predict(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    before = est.evaluate(_eval_input())
    assert before["global_step"] == 0
    np.testing.assert_allclose(before["loss"], np.mean(_Y ** 2), rtol=1e-5)
    est.train(_train_input(), steps=10)
    middle = est.evaluate(_eval_input())
    est.train(_train_input(), steps=10)
    after = est.evaluate(_eval_input())
    assert (middle["global_step"], after["global_step"]) == (10, 20)
    assert after["loss"] < middle["loss"] < before["loss"]
    assert set(after) == {"loss", "mae", "global_step"}
    assert est.evaluate(_eval_input(), steps=1)["global_step"] == 20
    predictions = list(est.predict(_eval_input()))
    assert len(predictions) == 40 and set(predictions[0]) == {"y", "double"}
    np.testing.assert_allclose(predictions[3]["double"], 2 * predictions[3]["y"])
    only = list(est.predict(_eval_input(), predict_keys="y"))
    assert set(only[0]) == {"y"}
    assert est.get_variable_names() == ["dense/bias", "dense/kernel", "global_step"]
    assert est.get_variable_value("global_step") == 20


def test_max_steps_stops_and_is_skipped_when_reached(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_train_input(), max_steps=7)
    assert est.get_variable_value("global_step") == 7
    kernel = est.get_variable_value("dense/kernel")
    est.train(_train_input(), max_steps=5)  # already past it: nothing to do
    np.testing.assert_array_equal(est.get_variable_value("dense/kernel"), kernel)
    with pytest.raises(ValueError, match="both steps and max_steps"):
        est.train(_train_input(), steps=1, max_steps=3)


def test_training_until_the_input_ends(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    finite = tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=16, num_epochs=2,
                                                shuffle=True)
    est.train(finite)
    assert est.get_variable_value("global_step") == 5  # 80 examples in batches of 16


def test_config_checkpoints_and_model_dir(tmp_path):
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=3,
                                    keep_checkpoint_max=2, tf_random_seed=3)
    est = tf.estimator.Estimator(_model_fn, config=config)
    assert est.model_dir == str(tmp_path) and est.config.save_checkpoints_secs is None
    est.train(_train_input(), steps=7)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["6", "7"]
    with pytest.raises(ValueError, match="different values"):
        tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "other"), config=config)
    assert tf.estimator.RunConfig().save_checkpoints_secs == 600
    assert tf.estimator.RunConfig().replace(save_checkpoints_steps=10).save_checkpoints_secs is None


def test_warm_start_from_another_model(tmp_path):
    first = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "a"))
    first.train(_train_input(), steps=5)
    second = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "b"),
                                    warm_start_from=str(tmp_path / "a"))
    second.train(_train_input(), steps=1)
    assert second.get_variable_value("global_step") == 1
    trained_once_more = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "a"))
    trained_once_more.train(_train_input(), steps=1)
    np.testing.assert_allclose(second.get_variable_value("dense/kernel"),
                               trained_once_more.get_variable_value("dense/kernel"), rtol=1e-6)


def test_input_fn_features_only_and_model_fn_arguments(tmp_path):
    def model_fn(features, mode, config):
        assert isinstance(config, tf.estimator.RunConfig)
        return tf.estimator.EstimatorSpec(mode, predictions=features * 3.0)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    # a constant input never ends on its own: take the first batch
    out = list(itertools.islice(est.predict(lambda: tf.constant([[1.0], [2.0]])), 2))
    assert [v.tolist() for v in out] == [[3.0], [6.0]]
    with pytest.raises(ValueError, match="features"):
        tf.estimator.Estimator(lambda x: None)


def test_estimator_spec_checks():
    loss = tf.constant(1.0)
    with pytest.raises(ValueError, match="train_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss)
    with pytest.raises(ValueError, match="loss"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL)
    with pytest.raises(ValueError, match="predictions"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
    with pytest.raises(TypeError, match="eval_metric_ops"):
        tf.estimator.EstimatorSpec("eval", loss=loss, eval_metric_ops={"m": loss})
    spec = tf.estimator.EstimatorSpec("infer", predictions={"p": loss})
    assert spec.mode == tf.estimator.ModeKeys.PREDICT and spec.training_hooks == ()


def test_numpy_input_fn_batches_epochs_and_shapes():
    fn = tf.estimator.inputs.numpy_input_fn(np.arange(10.0).reshape(5, 2), y={"a": np.arange(5)},
                                            batch_size=2, num_epochs=2, shuffle=False)
    features, labels = fn()
    assert features.shape.as_list() == [None, 2] and features.dtype == tf.float64
    assert labels["a"].dtype == tf.int64
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            seen.append(sess.run(labels["a"]).tolist())
    assert seen == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    with pytest.raises(ValueError, match="shuffle"):
        tf.estimator.inputs.numpy_input_fn(np.zeros(3))
    with pytest.raises(ValueError, match="same length"):
        tf.estimator.inputs.numpy_input_fn({"a": np.zeros(3)}, np.zeros(4), shuffle=False)()
    assert tf.compat.v1.estimator.inputs.numpy_input_fn is tf.estimator.inputs.numpy_input_fn


def test_input_fn_returning_a_dataset(tmp_path):
    def finite():
        return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8)

    def repeated():
        return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(8)

    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(finite)  # until the dataset ends: 40 examples in batches of 8
    assert est.get_variable_value("global_step") == 5
    est.train(repeated, steps=5)
    numpy_fed = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "numpy"))
    numpy_fed.train(_train_input(), steps=10)
    np.testing.assert_allclose(est.get_variable_value("dense/kernel"),
                               numpy_fed.get_variable_value("dense/kernel"), rtol=1e-6)
    result = est.evaluate(finite)
    np.testing.assert_allclose(result["loss"], numpy_fed.evaluate(_eval_input())["loss"],
                               rtol=1e-5)
    assert len(list(est.predict(finite))) == 40


def test_export_saved_model_says_what_to_use_instead(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="graphflow.save"):
        est.export_savedmodel(str(tmp_path / "export"), None)


def _checkpoint_files(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".index"))


def test_a_restarted_estimator_keeps_keep_checkpoint_max_checkpoints(tmp_path):
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), keep_checkpoint_max=2)
    for _ in range(5):  # each run restores, saves when the session starts and when it ends
        tf.estimator.Estimator(_model_fn, config=config).train(_train_input(), steps=3)
    assert _checkpoint_files(tmp_path) == ["model.ckpt-12.index", "model.ckpt-15.index"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [p.rsplit("/", 1)[1] for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-12", "model.ckpt-15"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("model.ckpt-")
                and p.name.split(".")[1].split("-")[1] not in ("12", "15")]


def test_training_is_quiet_unless_the_logging_verbosity_is_raised(tmp_path, capsys, recwarn):
    """As TF1: nothing on the console by default (no warning either: numpy_input_fn's feeders
    are graphflow's own collection, not one the checkpoint's .meta holds); `loss = ..., step =
    ...` every `log_step_count_steps` on stderr once `tf.logging.set_verbosity(tf.logging.INFO)`."""
    config = tf.estimator.RunConfig(log_step_count_steps=5)
    level = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.WARN)  # the default
        est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "a"), config=config)
        est.train(_train_input(), steps=10)
        assert capsys.readouterr() == ("", "") and not recwarn.list
        tf.logging.set_verbosity(tf.logging.INFO)
        est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "b"), config=config)
        est.train(_train_input(), steps=10)
    finally:
        tf.logging.set_verbosity(level)
    lines = capsys.readouterr().err.splitlines()
    steps = [line.split(", ")[1] for line in lines if line.startswith("INFO:graphflow:loss = ")]
    assert steps == ["step = 0", "step = 5"]
    assert any(line.startswith("INFO:graphflow:Loss for final step: ") for line in lines)
