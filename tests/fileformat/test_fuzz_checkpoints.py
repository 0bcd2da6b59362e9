"""Hostile checkpoints: thousands of mutants of TensorFlow's V2 fixtures (byte flips and
truncations of the index and data shards, re-checksummed block corruption, keys out of order,
bad block handles, entries with sizes, offsets, dtypes, shapes, shards, checksums or slices that
lie, bad headers, missing shards) each either load or fail with GraphFormatError, within a time
and memory bound. The counts are printed (pytest -s)."""

import collections
import os
import pathlib

import numpy as np

from tests.fileformat import checkpoint_fuzzing
from tests.tooling import sampled

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "tensorflow" / "checkpoints"
SEEDS = ["mlp/model-3", "cnn/model", "partitioned/model", "sharded/model-5", "dtypes/model"]


def test_mutated_checkpoints_load_or_are_rejected(tmp_path, fuzz_share):
    rng = np.random.default_rng(0)
    counts, kinds, failures = collections.Counter(), collections.Counter(), []
    for seed in SEEDS:
        prefix = FIXTURES / seed
        files = {p.name: p.read_bytes() for p in prefix.parent.glob(prefix.name + ".*")}
        index_name = prefix.name + ".index"
        target = tmp_path / prefix.parent.name
        target.mkdir()
        for kind, mutant in sampled(checkpoint_fuzzing.mutants(files, index_name, rng), fuzz_share):
            for name in os.listdir(target):
                os.unlink(target / name)
            for name, data in mutant.items():
                if data is not None:
                    (target / name).write_bytes(data)
            result = checkpoint_fuzzing.outcome(str(target / prefix.name))
            label = result if result in ("loaded", "rejected") else "failed"
            counts[label] += 1
            kinds[kind.split(" ")[0], label] += 1
            if label == "failed":
                failures.append(f"{seed}: {kind}: {result}")
    print(f"\n{sum(counts.values())} mutated checkpoints: {dict(counts)}")
    for (kind, label), n in sorted(kinds.items()):
        print(f"  {kind:8s} {label:9s} {n}")
    assert not failures, "\n".join(failures[:20])
    assert sum(counts.values()) >= 3000 * fuzz_share
    assert counts["rejected"] > 2000 * fuzz_share
