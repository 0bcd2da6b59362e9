"""Writes tf_ctc_reference.json, the TensorFlow numbers tests/ops/test_ctc_ops.py compares with.
Run with a TensorFlow installation (not a graphflow dependency):

    python tests/ops/data/make_tf_ctc_reference.py

It runs `ctc_program` (ctc_program.py: tf.nn.ctc_loss and its gradient under three attr settings
and batch-major with ignored entries, the greedy and beam search decoders) in graph mode."""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf
from ctc_program import ctc_program


def main():
    tf.disable_v2_behavior()
    values = ctc_program(tf, np)
    out = {name: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype),
                  "values": np.asarray(v).reshape(-1).tolist()} for name, v in values.items()}
    out = {"tensorflow": tf.__version__, "outputs": out}
    path = pathlib.Path(__file__).with_name("tf_ctc_reference.json")
    path.write_text(json.dumps(out, indent=0) + "\n")


if __name__ == "__main__":
    main()
