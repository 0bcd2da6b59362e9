"""Writes tf_pool_argmax_reference.json, the TensorFlow numbers tests/ops/test_pool_argmax_ops.py
compares with. Run with a TensorFlow installation (not a graphflow dependency):

    python tests/ops/data/make_tf_pool_argmax_reference.py

It runs `argmax_program` (pool_argmax_program.py) in graph mode."""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf
from pool_argmax_program import argmax_program


def main():
    tf.disable_v2_behavior()
    values = argmax_program(tf, np)
    out = {name: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype),
                  "values": np.asarray(v).reshape(-1).tolist()} for name, v in values.items()}
    path = pathlib.Path(__file__).with_name("tf_pool_argmax_reference.json")
    path.write_text(json.dumps({"tensorflow": tf.__version__, "outputs": out}) + "\n")


if __name__ == "__main__":
    main()
