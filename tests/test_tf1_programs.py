"""TF1 programs written as the classic examples are (tests/tf1_programs.py) run with
`import graphflow as tf`: each must learn (loss falls or accuracy rises), and where TensorFlow is
installed, give TensorFlow's numbers for the same program (one TensorFlow process runs them all)."""

import numpy as np
import pytest

import graphflow as tf
from tests import tf1_programs as programs
from tests.tf_reference import run_in_tensorflow, tf_python

_TF_CALLS = [("linear_regression", programs.linear_regression, {}),
             ("multi_tower", programs.multi_tower, {}),
             ("cnn_session", programs.cnn_session, {}),
             ("word2vec", programs.word2vec, {"fixed_samples": True}),
             ("dcgan", programs.dcgan, {}),
             ("metrics", programs.metrics_evaluation, {}),
             ("batch_norm", programs.batch_norm_resnet, {})]


def _write_image_folder(folder):
    """Two classes of 8x8 JPEGs: mostly blue and mostly red noise."""
    image_module = pytest.importorskip("PIL.Image", reason="Pillow writes the test images")
    rng = np.random.RandomState(7)
    for name, channel in (("blue", 2), ("red", 0)):
        (folder / name).mkdir(parents=True)
        for i in range(12):
            pixels = rng.randint(0, 140, (8, 8, 3))
            pixels[..., channel] += 100
            image_module.fromarray(pixels.astype(np.uint8)).save(folder / name / f"{i}.jpg",
                                                                 quality=95)
    return str(folder)


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory):
    return _write_image_folder(tmp_path_factory.mktemp("images") / "train")


@pytest.fixture(scope="module")
def tensorflow_results(image_folder):
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    return run_in_tensorflow(_TF_CALLS + [("images", programs.image_folder,
                                           {"folder": image_folder})],
                             extra_env={"TF_USE_LEGACY_KERAS": "1"})  # tf.layers: Keras 2


def _assert_matches(ours, theirs, rtol=1e-4, atol=1e-5):
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        if np.asarray(ours[key]).dtype.kind in "USO":
            assert str(ours[key]) == str(theirs[key]), key
            continue
        np.testing.assert_allclose(np.asarray(ours[key], np.float64), theirs[key], rtol=rtol,
                                   atol=atol, err_msg=key)


def test_linear_regression_with_float_placeholders_learns():
    ours = programs.linear_regression(tf, np)
    assert ours["dtype_is_float32"]
    assert ours["costs"][-1] < 0.2 * ours["costs"][0]


def test_linear_regression_matches_tensorflow(tensorflow_results):
    _assert_matches(programs.linear_regression(tf, np), tensorflow_results["linear_regression"])


def test_multi_tower_with_a_device_function_learns():
    ours = programs.multi_tower(tf, np)
    assert str(ours["placement"]) == str({"w1": "/cpu:0", "tower1_matmul": "/gpu:1"})
    assert ours["losses"][-1] < 0.6 * ours["losses"][0]


def test_multi_tower_matches_tensorflow(tensorflow_results):
    _assert_matches(programs.multi_tower(tf, np), tensorflow_results["multi_tower"])


def test_image_folder_read_with_read_file_and_decode_jpeg_learns(image_folder):
    ours = programs.image_folder(tf, np, image_folder)
    assert ours["first_batch"].shape == (8, 8, 8, 3)
    assert ours["losses"][-1] < 0.5 * ours["losses"][0]
    assert ours["accuracies"][-3:].min() == 1.0 and ours["accuracies"][0] < 1.0


def test_image_folder_matches_tensorflow(image_folder, tensorflow_results):
    theirs, ours = tensorflow_results["images"], programs.image_folder(tf, np, image_folder)
    # TensorFlow decodes JPEGs with libjpeg's fast integer IDCT, Pillow with the accurate one:
    # pixels differ by a few levels, so the losses agree to about 1e-3.
    np.testing.assert_allclose(ours["first_batch"], theirs["first_batch"], atol=8 / 255)
    np.testing.assert_allclose(ours["losses"], theirs["losses"], atol=2e-3)
    np.testing.assert_array_equal(ours["accuracies"], theirs["accuracies"])


def test_estimator_cnn_learns_and_equals_a_session_loop(tmp_path):
    est = programs.cnn_estimator(tf, np, model_dir=str(tmp_path))
    loop = programs.cnn_session(tf, np)
    assert est["accuracy"] > est["initial_accuracy"]
    assert est["eval_loss"] < np.log(2.0)
    assert est["global_step"] == 12  # 6 steps, then resumed from the checkpoint up to 12
    assert (tmp_path / "checkpoint").exists()
    np.testing.assert_allclose(np.mean(est["predicted"] == est["labels"]), est["accuracy"])
    # the Estimator (numpy_input_fn batches, checkpoint resume) trains exactly as a plain loop
    for key in ("initial_accuracy", "accuracy", "eval_loss", "dense_kernel"):
        np.testing.assert_allclose(est[key], loop[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_cnn_session_loop_matches_tensorflow(tensorflow_results):
    _assert_matches(programs.cnn_session(tf, np), tensorflow_results["cnn_session"])


def test_word2vec_nce_loss_falls():
    losses = programs.word2vec(tf, np, fixed_samples=False)["losses"]
    assert len(losses) == 40  # StopAtStepHook(last_step=40)
    assert losses[-10:].mean() < 0.8 * losses[:10].mean()


def test_word2vec_matches_tensorflow(tensorflow_results):
    ours = programs.word2vec(tf, np, fixed_samples=True)
    assert ours["losses"][-10:].mean() < ours["losses"][:10].mean()
    _assert_matches(ours, tensorflow_results["word2vec"])


def test_dcgan_trains_and_matches_tensorflow(tensorflow_results):
    ours = programs.dcgan(tf, np)
    _assert_matches(ours, tensorflow_results["dcgan"])


def test_dcgan_discriminator_loss_falls():
    ours = programs.dcgan(tf, np)
    assert ours["samples"].shape == (8, 8, 8, 1)
    assert np.all(np.abs(ours["samples"]) <= 1.0)
    assert ours["d_losses"][-3:].mean() < ours["d_losses"][:3].mean()
    assert ours["g_losses"][-1] < ours["g_losses"][0]


def _roc_auc(labels, scores):
    pos, neg = scores[labels == 1], scores[labels == 0]
    return np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))


def test_metrics_evaluation_accuracy_rises():
    ours = programs.metrics_evaluation(tf, np)
    labels = ours["labels"]
    assert ours["after_accuracy"] > ours["before_accuracy"]
    assert ours["after_mean_loss"] < ours["before_mean_loss"]
    for stage in ("before", "after"):
        prob = ours[stage + "_probability"]
        predicted = (prob > 0.5).astype(np.int64)
        tp = np.sum((predicted == 1) & (labels == 1))
        fp = np.sum((predicted == 1) & (labels == 0))
        fn = np.sum((predicted == 0) & (labels == 1))
        np.testing.assert_allclose(ours[stage + "_accuracy"], np.mean(predicted == labels))
        np.testing.assert_allclose(ours[stage + "_true_positives"], tp)
        np.testing.assert_allclose(ours[stage + "_precision"], tp / (tp + fp), rtol=1e-6)
        np.testing.assert_allclose(ours[stage + "_recall"], tp / (tp + fn), rtol=1e-6)
        np.testing.assert_allclose(ours[stage + "_mse"], np.mean((prob - labels) ** 2), rtol=1e-5)
        np.testing.assert_allclose(ours[stage + "_rmse"], np.sqrt(ours[stage + "_mse"]), rtol=1e-6)
        # 200 thresholds approximate the exact area under the ROC curve
        assert abs(ours[stage + "_auc"] - _roc_auc(labels, prob)) < 0.02


def test_metrics_evaluation_matches_tensorflow(tensorflow_results):
    _assert_matches(programs.metrics_evaluation(tf, np), tensorflow_results["metrics"])


def test_batch_norm_resnet_learns_and_reads_after_its_assign():
    ours = programs.batch_norm_resnet(tf, np)
    assert ours["layers_losses"][-1] < ours["layers_losses"][0]
    assert ours["moments_losses"][-1] < ours["moments_losses"][0]
    assert list(ours["identity_after_assign"]) == [3.0, 9.0]


def test_batch_norm_resnet_gives_tensorflows_numbers(tensorflow_results):
    _assert_matches(programs.batch_norm_resnet(tf, np), tensorflow_results["batch_norm"],
                    rtol=2e-4, atol=2e-5)
