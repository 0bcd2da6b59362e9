"""Fuzz the graph-file loader: mutate valid files many times; every mutant must load correctly or fail
with GraphFormatError, within a time and memory bound (tests/fileformat/fuzzing.py has the mutations).

    python benchmarks/fuzz_graph_files.py --seeds 30      # about 10,000+ files

Prints the number of files tried, the outcomes by kind, and every unexpected failure.
"""

import argparse
import collections
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.fileformat import fuzzing  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=30, help="random seeds (each ~350 mutants)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    outcomes, failures = collections.Counter(), []
    with tempfile.TemporaryDirectory() as tmp:
        seed_path = os.path.join(tmp, "seed.gfz")
        feeds = fuzzing.sample_file(seed_path)
        with open(seed_path, "rb") as f:
            data = f.read()
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            for kind, mutant in fuzzing.mutants(data, rng, byte_flips=60, truncations=30):
                path = os.path.join(tmp, "mutant.gfz")
                with open(path, "wb") as f:
                    f.write(mutant)
                result = fuzzing.outcome(path, feeds)
                ok = result in ("loaded", "rejected")
                outcomes[(kind.split(" ")[0], result if ok else "FAILED")] += 1
                if not ok:
                    failures.append(f"seed {seed} {kind}: {result}")
    total = sum(outcomes.values())
    print(f"{total} mutated files in {time.perf_counter() - start:.0f} s")
    for (kind, result), n in sorted(outcomes.items()):
        print(f"  {kind:10s} {result:9s} {n}")
    print(f"unexpected outcomes: {len(failures)}")
    for line in failures[:50]:
        print("  " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
