"""`graphflow run`'s output: a classifier's probabilities as each row's top classes (`--top K`,
`--raw` for the array), and `--output` to .npy (one output) or .npz files."""

import io

import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import cli
from graphflow.tools.cli_run_output import is_probabilities

LOGITS = np.array([[2.0, 0.5, 3.0, -1.0], [0.0, 4.0, 1.0, 0.5], [1.0, 1.0, 0.0, 0.0]],
                  np.float32)


@pytest.fixture
def classifier(tmp_path):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    logits = tf.identity(x, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    tf.save(str(tmp_path / "clf.gfz"), {"x": x}, {"probs": probs})
    tf.save(str(tmp_path / "both.gfz"), {"x": x}, {"probs": probs, "logits": logits})
    np.save(tmp_path / "x.npy", LOGITS)
    return tmp_path


def _run(path, *args):
    out = io.StringIO()
    status = cli.main(["run", str(path), *map(str, args)], out=out)
    return status, out.getvalue()


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_probabilities_print_as_each_rows_top_three_classes(classifier):
    status, text = _run(classifier / "clf.gfz", "--input", f"x={classifier / 'x.npy'}")
    assert status == 0
    p = _softmax(LOGITS.astype(np.float64))
    assert text.splitlines() == [
        "probs: float32 [3, 4], rows of probabilities: top 3 of 4 classes per row, as class: "
        "probability (--raw prints the array)",
        f"  row 0   2: {p[0, 2]:.4f}   0: {p[0, 0]:.4f}   1: {p[0, 1]:.4f}",
        f"  row 1   1: {p[1, 1]:.4f}   2: {p[1, 2]:.4f}   3: {p[1, 3]:.4f}",
        # ties keep the class order
        f"  row 2   0: {p[2, 0]:.4f}   1: {p[2, 1]:.4f}   2: {p[2, 2]:.4f}"]


def test_top_k_raw_and_other_outputs(classifier):
    x = f"x={classifier / 'x.npy'}"
    status, text = _run(classifier / "both.gfz", "--input", x, "--top", "1")
    assert status == 0
    lines = text.splitlines()
    # logits are not probabilities: printed as the array, or ranked when --top asks
    assert "logits: float32 [3, 4], top 1 of 4 values per row, as column: value (--raw prints " \
        "the array)" in lines
    assert "  row 0   2: 3" in lines and "  row 1   1: 4" in lines
    assert any(line.startswith("probs: float32 [3, 4], rows of probabilities: top 1") for line in lines)
    status, text = _run(classifier / "both.gfz", "--input", x)
    assert status == 0
    assert "logits: float32 [3, 4]\n[[ 2.   0.5  3.  -1. ]" in text
    assert "probs: float32 [3, 4], rows of probabilities: top 3" in text
    status, text = _run(classifier / "clf.gfz", "--input", x, "--raw")
    assert status == 0 and text.startswith("probs: float32 [3, 4]\n[[")
    assert "row 0" not in text


def test_many_rows_are_counted_not_listed(classifier, tmp_path):
    np.save(tmp_path / "big.npy", np.zeros([130, 4], np.float32))
    status, text = _run(classifier / "clf.gfz", "--input", f"x={tmp_path / 'big.npy'}")
    assert status == 0
    lines = text.splitlines()
    assert lines[1] == "  row   0   0: 0.2500   1: 0.2500   2: 0.2500"
    assert lines[-2].startswith("  row  99 ")
    assert lines[-1] == "  ... 30 more rows (--output FILE.npy writes every row)"


def test_output_writes_npy_for_one_output_and_npz_for_all(classifier, capsys):
    x = f"x={classifier / 'x.npy'}"
    npy = classifier / "p.npy"
    status, text = _run(classifier / "clf.gfz", "--input", x, "--output", npy)
    assert status == 0 and text == f"wrote probs (float32 [3, 4]) to {npy}\n"
    np.testing.assert_allclose(np.load(npy, allow_pickle=False), _softmax(LOGITS), rtol=1e-6)
    status, _ = _run(classifier / "both.gfz", "--input", x, "--output", classifier / "two.npy")
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and not (classifier / "two.npy").exists()
    assert "an .npy file holds one output and the run computes 2 (['logits', 'probs']); " \
        "choose one with --outputs NAME or write an .npz file" in err
    status, text = _run(classifier / "both.gfz", "--input", x, "--outputs", "logits",
                        "--output", classifier / "two.npy")
    assert status == 0
    assert np.array_equal(np.load(classifier / "two.npy"), LOGITS)
    status, text = _run(classifier / "both.gfz", "--input", x, "--output", classifier / "o.npz")
    assert status == 0 and text == f"wrote 2 output(s) to {classifier / 'o.npz'}\n"


def test_top_and_raw_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "m.gfz", "--top", "2", "--raw"])
    assert info.value.code == 2 and "not allowed with" in capsys.readouterr().err


@pytest.mark.parametrize("value, expected", [
    (np.array([[0.25, 0.75], [1.0, 0.0]], np.float32), True),
    (np.array([[0.5, 0.5005]], np.float16), True),          # within 1e-3
    (np.array([[0.5, 0.502]]), False),
    (np.array([[1.5, -0.5]]), False),                      # sums to 1, not probabilities
    (np.array([[np.nan, 1.0]]), False),
    (np.array([[1.0]]), False),                            # one column: nothing to rank
    (np.array([1.0, 0.0]), False),                         # a vector
    (np.array([[1, 0]]), False),                           # integers
    (np.zeros([0, 3], np.float32), False),
])
def test_what_counts_as_probabilities(value, expected):
    assert is_probabilities(value) is expected


def test_small_probabilities_keep_their_digits(classifier):
    status, text = _run(classifier / "clf.gfz", "--input", "x=[[20, 0, 0, 1]]")
    assert status == 0
    p = _softmax(np.array([[20, 0, 0, 1]], np.float32))[0]
    assert text.splitlines()[1] == f"  row 0   0: 1.0000   3: {p[3]:.1e}   1: {p[1]:.1e}"
    assert "e-09" in text  # not 0.0000
