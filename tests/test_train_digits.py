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


def test_saved_cnn_holds_only_what_its_output_needs(tmp_path):
    """The file is saved with outputs={"probs": ...}: it keeps the model's 62,250 parameters and
    none of the training graph (Adam slots and counters, labels, loss, train op)."""
    import numpy as np

    import graphflow as tf

    out = subprocess.run([sys.executable, SCRIPT, "--model", "cnn", "--epochs", "1", "--quiet",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    with tf.load(str(tmp_path / "digits_cnn.gfz")) as model:
        assert sum(int(np.prod(v.shape.as_list())) for v in model.variables) == 62_250
        names = [op.name for op in model.graph.get_operations()]
        types = {op.type for op in model.graph.get_operations()}
    assert not [n for n in names if "Adam" in n or "beta1_power" in n or n.startswith("labels")]
    assert not types & {"ApplyAdam", "SparseSoftmaxCrossEntropyWithLogits"}
    inspect = subprocess.run([sys.executable, "-m", "graphflow.tools.cli", "inspect",
                              str(tmp_path / "digits_cnn.gfz")], capture_output=True, text=True,
                             timeout=120, cwd=ROOT)
    assert "variables: 10 (62250 parameters" in inspect.stdout, inspect.stdout + inspect.stderr
