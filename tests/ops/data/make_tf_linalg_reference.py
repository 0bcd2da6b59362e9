"""Record TensorFlow's numbers for tests/ops/linalg_tf_program.py into tf_linalg_reference.json:

    GRAPHFLOW_TF_PYTHON=/path/to/tf/python python tests/ops/data/make_tf_linalg_reference.py
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tf_reference import run_in_tensorflow  # noqa: E402

from tests.ops.linalg_tf_program import REFERENCE, linalg_program  # noqa: E402

if __name__ == "__main__":
    numbers = run_in_tensorflow([("r", linalg_program, {})])["r"]
    REFERENCE.write_text(json.dumps({k: v.tolist() for k, v in sorted(numbers.items())},
                                    indent=None) + "\n")
    print(f"wrote {len(numbers)} arrays to {REFERENCE}")
