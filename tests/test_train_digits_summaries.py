"""`examples/train_digits.py --logdir`: TensorBoard event files with the loss and accuracy per epoch,
one histogram per layer variable and the graph, read back with TensorBoard's EventAccumulator."""

import os
import subprocess
import sys
from importlib.util import find_spec

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "examples", "train_digits.py")

# the example runs in a process of its own: only whether it can import them matters here
# (importing scikit-learn takes seconds)
pytestmark = pytest.mark.skipif(find_spec("sklearn") is None or find_spec("tqdm") is None,
                                reason="the digits example needs scikit-learn and tqdm")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                                        reason="summaries need the tensorboard package")


def test_logdir_holds_scalars_histograms_and_the_graph(tmp_path):
    logdir = tmp_path / "logs"
    out = subprocess.run([sys.executable, SCRIPT, "--model", "mlp", "--epochs", "2", "--quiet",
                          "--out", str(tmp_path), "--logdir", str(logdir)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    acc = event_accumulator.EventAccumulator(str(logdir / "mlp"))
    acc.Reload()
    tags = acc.Tags()
    assert sorted(tags["scalars"]) == ["accuracy", "loss"]
    assert sorted(tags["histograms"]) == ["dense_1_bias", "dense_1_kernel", "dense_2_bias",
                                          "dense_2_kernel", "dense_bias", "dense_kernel"]
    assert [e.step for e in acc.Scalars("loss")] == [1, 2]
    accuracy = [e.value for e in acc.Scalars("accuracy")]
    assert all(0.5 < a <= 1.0 for a in accuracy)
    assert acc.Histograms("dense_kernel")[0].histogram_value.num == 64 * 256
    assert len(acc.Graph().node) > 50
