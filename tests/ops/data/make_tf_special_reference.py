"""Record TensorFlow's numbers for tests/ops/special_tf_program.py into tf_special_reference.json:

    GRAPHFLOW_TF_PYTHON=/path/to/tf/python python tests/ops/data/make_tf_special_reference.py
"""

import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tf_reference import run_in_tensorflow  # noqa: E402

from tests.ops.special_tf_program import REFERENCE, special_program  # noqa: E402

if __name__ == "__main__":
    numbers = run_in_tensorflow([("r", special_program, {})])["r"]
    floats = {k: np.asarray(v, np.float64).tolist() for k, v in sorted(numbers.items())}
    REFERENCE.write_text(json.dumps(floats) + "\n")
    print(f"wrote {len(numbers)} arrays to {REFERENCE}")
