"""Hostile TensorFlow files: over 4,000 mutants (two seeds each) of the `saved_model.pb` and
`.meta` TensorFlow wrote (tests/fixtures/tensorflow/; mutations in tf_fuzzing.py: byte flips,
truncations, bad signature and collection entries, asset paths leaving the directory, dropped and
renamed nodes) each load or are rejected with GraphFormatError (or TensorFlow's own error for a
missing tag set or checkpoint key), within a time and memory bound; nothing outside the directory
is read."""

import os
import pathlib
import shutil

import numpy as np
import pytest

import graphflow as tf
from tests.interop.tensorflow import tf_fuzzing
from tests.tooling import sampled

FIXTURES = pathlib.Path(__file__).parents[2] / "fixtures" / "tensorflow"


def _run(mutants, load_one):
    failures, counts = [], {}
    for kind, data in mutants:
        result = tf_fuzzing.outcome(lambda data=data: load_one(data))
        key = result if result in ("loaded", "rejected") else "failed"
        counts[key] = counts.get(key, 0) + 1
        if key == "failed":
            failures.append(f"{kind}: {result}")
    return counts, failures


@pytest.mark.parametrize("seed", [0, 2])
def test_mutated_saved_models_load_or_are_rejected(tmp_path, seed, fuzz_share):
    export_dir = tmp_path / "export"
    shutil.copytree(FIXTURES / "saved_model" / "two_heads", export_dir)
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the SavedModel")
    os.symlink(secret, export_dir / "assets" / "link_out.txt")
    pb_path = export_dir / "saved_model.pb"
    data = pb_path.read_bytes()

    def load_one(mutant):
        pb_path.write_bytes(mutant)
        with tf.Graph().as_default(), tf.Session() as sess:
            tf.saved_model.loader.load(sess, ["serve"], str(export_dir))

    mutants = tf_fuzzing.saved_model_mutants(data, np.random.default_rng(seed))
    counts, failures = _run(sampled(mutants, fuzz_share), load_one)
    print("saved_model.pb mutants:", counts)
    assert sum(counts.values()) >= 1000 * fuzz_share
    assert counts.get("rejected", 0) > 300 * fuzz_share
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("seed", [1, 3])
def test_mutated_meta_graphs_load_or_are_rejected(tmp_path, seed, fuzz_share):
    for name in os.listdir(FIXTURES / "meta"):
        shutil.copy(FIXTURES / "meta" / name, tmp_path / name)
    meta_path = tmp_path / "mlp-20.meta"
    data = meta_path.read_bytes()

    def load_one(mutant):
        meta_path.write_bytes(mutant)
        with tf.Graph().as_default(), tf.Session() as sess:
            saver = tf.train.import_meta_graph(str(meta_path))
            if saver is not None:
                saver.restore(sess, str(tmp_path / "mlp-20"))

    mutants = tf_fuzzing.meta_mutants(data, np.random.default_rng(seed))
    counts, failures = _run(sampled(mutants, fuzz_share), load_one)
    print(".meta mutants:", counts)
    assert sum(counts.values()) >= 1000 * fuzz_share
    assert counts.get("rejected", 0) > 300 * fuzz_share
    assert not failures, "\n".join(failures[:20])
