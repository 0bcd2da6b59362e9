"""tests/tf1/programs/sparse_logistic_regression.py (hashed sparse features, embedding_lookup_sparse
and sparse_tensor_dense_matmul, GradientDescent) gives TensorFlow's numbers: it checks its
recorded ones itself when run (tests/tf1/test_programs_as_written.py); here it also runs
unchanged but for its import under TensorFlow, and both runs' printed numbers agree."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import graphflow
from tests.tf_reference import tf_python

PROGRAM = pathlib.Path(__file__).parent / "programs" / "sparse_logistic_regression.py"


def _numbers(python, source, env):
    done = subprocess.run([python, "-c", source], capture_output=True, text=True, timeout=600,
                          env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_program_gives_tensorflows_numbers_live():
    source = PROGRAM.read_text()
    assert "\nimport graphflow as tf\n" in source
    as_tf = source.replace("\nimport graphflow as tf\n", "\nimport tensorflow.compat.v1 as tf\n"
                           "tf.disable_v2_behavior()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    want = _numbers(tf_python(), as_tf, env)
    root = os.path.dirname(os.path.dirname(graphflow.__file__))
    got = _numbers(sys.executable, source, dict(os.environ, PYTHONPATH=root))
    np.testing.assert_allclose(got["losses_a"], want["losses_a"], rtol=1e-5)
    np.testing.assert_allclose(got["losses_b"], want["losses_b"], rtol=1e-5)
    assert got["accuracy"] == want["accuracy"]
