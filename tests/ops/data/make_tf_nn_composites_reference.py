"""Writes tf_nn_composites_reference.json, the TensorFlow numbers tests/ops/test_conv_composite_ops.py
compares with. Run with a TensorFlow installation (not a graphflow dependency):

    python tests/ops/data/make_tf_nn_composites_reference.py

It runs `nn_composites_program` (nn_composites_program.py) in graph mode."""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf
from nn_composites_program import nn_composites_program


def main():
    tf.disable_v2_behavior()
    values = nn_composites_program(tf, np)
    out = {name: {"shape": list(np.shape(v)), "values": np.asarray(v).reshape(-1).tolist()}
           for name, v in values.items()}
    path = pathlib.Path(__file__).with_name("tf_nn_composites_reference.json")
    path.write_text(json.dumps({"tensorflow": tf.__version__, "outputs": out}) + "\n")


if __name__ == "__main__":
    main()
