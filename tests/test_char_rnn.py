"""examples/char_rnn.py at tiny sizes: the loss falls, a sample is printed, and the saved file
samples text through `graphflow run --text` in a fresh process, without the building code."""

import importlib.util
import pathlib
import re
import subprocess
import sys

import numpy as np

import graphflow as tf

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "char_rnn.py"


def _example():
    spec = importlib.util.spec_from_file_location("char_rnn_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_char_rnn_trains_samples_and_round_trips_through_graphflow_run(tmp_path, capsys):
    example = _example()
    model = tmp_path / "char.gfz"
    assert example.main(["--steps", "40", "--hidden", "24", "--layers", "2", "--seq-len", "12",
                         "--batch", "8", "--learning-rate", "0.01", "--print-every", "10",
                         "--sample-length", "30", "--seed-text", "The", "--save",
                         str(model)]) == 0
    printed = capsys.readouterr().out
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", printed)]
    assert len(losses) == 5 and losses[0] > 4.0       # starts near log(68) = 4.22
    assert losses[-1] < losses[0] - 0.6               # and falls
    vocab = set(example.load_text())
    sample = re.search(r"^sample: (.*)$", printed, re.M).group(1)
    assert sample.startswith("The") and set(sample[3:]) <= vocab

    result = subprocess.run([sys.executable, "-m", "graphflow.tools.cli", "run", str(model),
                             "--text", "--input", 'seed="Maud"', "--input", "length=25"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    line = [x for x in result.stdout.splitlines() if x.startswith("sample: ")]
    assert len(line) == 1
    text = line[0][len("sample: "):]
    assert len(text) == 25 and set(text) <= vocab

    loaded = tf.load(str(model))                      # the file holds a while_loop sampler
    assert {"seed", "length"} == set(loaded.inputs)
    codes = loaded.run({"seed": np.array([ord(c) for c in "mill"], np.int32),
                        "length": np.int32(7)})["sample"]
    assert codes.shape == (7,) and set(map(chr, codes)) <= vocab
