"""Hostile TFRecord files: over 2,000 mutants of plain, GZIP and ZLIB files (byte flips and
truncations of the stored bytes, lengths up to 2**64-1 with valid CRCs, broken CRCs, garbage,
small streams declaring huge records; `tfrecord_fuzzing.py`) each read or raise DataLossError,
each within 2 s and 32 MiB of traced memory."""

import numpy as np
import pytest

from tests.fileformat import tfrecord_fuzzing


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_mutated_tfrecord_files_read_or_are_data_loss(tmp_path, compression, fuzz_share):
    rng = np.random.default_rng(len(compression))
    records = tfrecord_fuzzing.seed_records(rng)
    counts, failures = {}, []
    path = str(tmp_path / "m.tfrecord")
    rounds = max(1, round(15 * fuzz_share))  # a round is every kind of mutant
    for _ in range(rounds):
        for kind, data in tfrecord_fuzzing.mutants(records, compression, rng):
            with open(path, "wb") as f:
                f.write(data)
            result = tfrecord_fuzzing.outcome(path, compression)
            key = result if result in ("read", "rejected") else "failed"
            counts[key] = counts.get(key, 0) + 1
            if key == "failed":
                failures.append(f"{kind}: {result}")
    assert not failures, "\n".join(failures[:20])
    assert sum(counts.values()) >= 840 * rounds / 15  # x3 compressions: over 2,500 files
    assert counts.get("rejected", 0) > 500 * rounds / 15
