"""Hostile ONNX files: over 3,000 mutants of ONNX files graphflow exported (byte flips,
truncations, nested Ifs, cycles, self loops, dangling inputs, names defined twice, huge and
negative dims, shape inputs above 2**31; `onnx_fuzzing.py`) each import cleanly or are refused
with GraphFormatError, each within 10 s (a busy machine's bound: the nested-If blow-up this
guards against took minutes) and 64 MiB of traced memory."""

from tests.interop.onnx import onnx_fuzzing


def test_mutated_onnx_files_import_or_are_rejected(tmp_path, fuzz_share):
    paths = onnx_fuzzing.seed_models(str(tmp_path))
    rounds = max(1, round(15 * fuzz_share))  # a round is every kind of mutant of every file
    counts, failures, slowest = onnx_fuzzing.run(paths, rounds=rounds, seed=0, seconds=10.0)
    assert not failures, "\n".join(failures[:20])
    assert sum(counts.values()) >= 3000 * rounds / 15
    assert counts.get("rejected", 0) > 2000 * rounds / 15
    assert counts.get("loaded", 0) > 50 * rounds / 15
    assert slowest < 10.0
