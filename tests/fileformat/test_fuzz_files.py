"""Hostile graph files: a few hundred mutants of a valid file (byte flips, truncations, every attr set
to every wrong type, dropped/added inputs, cycles, dims of 2**63, wrong output counts) each either
load correctly or fail with GraphFormatError, within a time and memory bound.
`benchmarks/fuzz_graph_files.py` runs the same mutations over more seeds (10,000+ files)."""

import numpy as np

from tests.fileformat import fuzzing


def test_mutated_files_load_or_are_rejected(tmp_path):
    seed = tmp_path / "seed.gfz"
    feeds = fuzzing.sample_file(str(seed))
    data = seed.read_bytes()
    rng = np.random.default_rng(0)
    failures, counts = [], {}
    for i, (kind, mutant) in enumerate(fuzzing.mutants(data, rng)):
        path = tmp_path / f"m{i}.gfz"
        path.write_bytes(mutant)
        result = fuzzing.outcome(str(path), feeds)
        counts[result if result in ("loaded", "rejected") else "failed"] = \
            counts.get(result if result in ("loaded", "rejected") else "failed", 0) + 1
        if result not in ("loaded", "rejected"):
            failures.append(f"{kind}: {result}")
        path.unlink()
    assert sum(counts.values()) >= 300
    assert counts.get("rejected", 0) > 100
    assert not failures, "\n".join(failures[:20])
