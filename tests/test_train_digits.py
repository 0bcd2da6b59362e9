"""The main job end to end: `python examples/train_digits.py --quick` in a fresh process trains the
MLP and the CNN on the digits, saves each graph with its weights, reloads it and evaluates again.
Quick mode runs a few epochs; with its fixed seeds it reaches MLP 0.969 and CNN 0.969 test
accuracy, and the thresholds below leave room for numeric differences between machines."""

import os
import re
import subprocess
import sys
from importlib.util import find_spec

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "examples", "train_digits.py")
QUICK_THRESHOLDS = {"mlp": 0.95, "cnn": 0.92}

# the example runs in a process of its own: only whether it can import them matters here
# (importing scikit-learn takes seconds)
pytestmark = pytest.mark.skipif(find_spec("sklearn") is None or find_spec("tqdm") is None,
                                reason="the digits example needs scikit-learn and tqdm")


def test_train_digits_quick(tmp_path):
    out = subprocess.run([sys.executable, SCRIPT, "--quick", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "1437 training and 360 test images" in text
    for model, threshold in QUICK_THRESHOLDS.items():
        found = re.search(rf"^{model}: test accuracy ([0-9.]+)", text, re.M)
        assert found, text
        accuracy = float(found.group(1))
        assert accuracy >= threshold, f"{model} reached only {accuracy}:\n{text}"
        reloaded = re.search(rf"^{model}: saved to (\S+); reloaded test accuracy ([0-9.]+)",
                             text, re.M)
        assert reloaded, text
        assert os.path.isfile(reloaded.group(1))
        assert os.path.dirname(reloaded.group(1)) == str(tmp_path)
        assert float(reloaded.group(2)) == accuracy
    assert "loss=" in text and "acc=" in text  # the progress bar reports both


def test_train_digits_single_model_flags(tmp_path):
    out = subprocess.run([sys.executable, SCRIPT, "--model", "mlp", "--epochs", "2", "--quiet",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "mlp: test accuracy" in out.stdout and "cnn:" not in out.stdout
    assert "trained 2 epochs" in out.stdout
    assert sorted(os.listdir(tmp_path)) == ["digits_mlp.gfz", "test_images.npy"]


@pytest.fixture(scope="module")
def one_epoch_models(tmp_path_factory):
    """`--epochs 1` of both models: the directory holding digits_mlp.gfz, digits_cnn.gfz and
    test_images.npy, as the README's first line leaves them in models/."""
    out_dir = tmp_path_factory.mktemp("models")
    out = subprocess.run([sys.executable, SCRIPT, "--epochs", "1", "--quiet", "--out", str(out_dir)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    return out_dir


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "graphflow.tools.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_saved_cnn_holds_only_what_its_output_needs(one_epoch_models):
    """The file is saved with outputs={"probs": ...}: it keeps the model's 62,250 parameters and
    none of the training graph (Adam slots and counters, labels, loss, train op)."""
    import numpy as np

    import graphflow as tf

    with tf.load(str(one_epoch_models / "digits_cnn.gfz")) as model:
        assert sum(int(np.prod(v.shape.as_list())) for v in model.variables) == 62_250
        names = [op.name for op in model.graph.get_operations()]
        types = {op.type for op in model.graph.get_operations()}
    assert not [n for n in names if "Adam" in n or "beta1_power" in n or n.startswith("labels")]
    assert not types & {"ApplyAdam", "SparseSoftmaxCrossEntropyWithLogits"}
    inspect = _cli("inspect", one_epoch_models / "digits_cnn.gfz")
    assert "variables: 10 (62250 parameters" in inspect.stdout, inspect.stdout + inspect.stderr


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_saved_models_export_to_onnx_and_match_graphflow_run(model, one_epoch_models, tmp_path):
    """The README's models: saved as inference sees them (the unfed `training` flag fixed to
    False: no dropout), `graphflow export-onnx` writes them, and onnxruntime gives what
    `graphflow run` gives."""
    import numpy as np

    import graphflow as tf
    from graphflow.framework.graph import needed_ops

    ort = pytest.importorskip("onnxruntime")
    saved = one_epoch_models / f"digits_{model}.gfz"
    with tf.load(str(saved)) as loaded:
        ops = loaded.graph.get_operations()
        computing = needed_ops([loaded.outputs["probs"].op], {loaded.inputs["x"]})
    computing_types = {op.type for op in computing}
    assert not computing_types & {"RandomUniform", "Select", "Floor", "PlaceholderWithDefault"}
    assert not [op.name for op in ops if op.name == "training" or op.name.startswith("dropout")]
    # what random numbers remain initialize variables (global_variables_initializer on a load)
    assert all("/Initializer/" in op.name for op in ops if op.type == "RandomUniform")

    exported = _cli("export-onnx", saved, tmp_path / f"{model}.onnx")
    assert exported.returncode == 0, exported.stderr
    images = one_epoch_models / "test_images.npy"
    ran = _cli("run", saved, "--input", f"x={images}", "--output", tmp_path / "out.npz")
    assert ran.returncode == 0, ran.stderr
    with np.load(tmp_path / "out.npz", allow_pickle=False) as out:
        want = out["probs"]
    session = ort.InferenceSession(str(tmp_path / f"{model}.onnx"),
                                   providers=["CPUExecutionProvider"])
    got = session.run(["probs"], {"x": np.load(images)})[0]
    assert got.shape == want.shape == (5, 10)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
