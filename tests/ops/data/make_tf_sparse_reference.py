"""Writes tf_sparse_reference.json, TensorFlow's numbers for the sparse programs of
tests/ops/sparse_programs.py (compared with by tests/ops/test_sparse_*.py and
tests/tf1/test_embedding_sparse.py). Run with a TensorFlow installation (not a graphflow
dependency), from the repository root:

    python tests/ops/data/make_tf_sparse_reference.py

Each program runs in graph mode under tensorflow.compat.v1; every fetched array is written with
its dtype and shape (strings as text, dtype "bytes")."""

import json
import pathlib
import sys

import numpy as np
import tensorflow.compat.v1 as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from sparse_programs import PROGRAMS  # noqa: E402


def _entry(array):
    if array.dtype.kind in "OS":  # strings: written as text, read back as bytes
        return {"dtype": "bytes", "shape": list(array.shape),
                "values": [v.decode() for v in array.reshape(-1)]}
    return {"dtype": array.dtype.name, "shape": list(array.shape),
            "values": array.reshape(-1).tolist()}


def main():
    tf.disable_v2_behavior()
    out = {"tensorflow": tf.__version__}
    for key, program in PROGRAMS.items():
        with tf.Graph().as_default():
            results = program(tf, np)
        out[key] = {name: _entry(np.asarray(v)) for name, v in sorted(results.items())}
    path = pathlib.Path(__file__).with_name("tf_sparse_reference.json")
    lines = ["{", f'"tensorflow": {json.dumps(out.pop("tensorflow"))},']
    for i, (key, arrays) in enumerate(out.items()):  # one line per array
        lines.append(f"{json.dumps(key)}: {{")
        items = [f"{json.dumps(name)}: {json.dumps(entry)}" for name, entry in arrays.items()]
        lines.append(",\n".join(items))
        lines.append("}" + ("," if i < len(out) - 1 else ""))
    path.write_text("\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    main()
