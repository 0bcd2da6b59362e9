"""`fit`, `evaluate` and `predict` report progress as tf.keras does: `verbose=1` a bar with the ETA
and the running loss, redrawn in place on a terminal and only its last line per epoch in a file;
`verbose=2` one line per epoch; `verbose=0` nothing. The terminal and the file are told apart by
`sys.stdout.isatty()` (`progbar.is_interactive`), which these tests set; the clock is a fake one
where exact times are asserted."""

import re

import numpy as np
import pytest

import graphflow as tf
from graphflow.tf1.keras import progbar

# a final line: the time taken and the step time in place of the ETA
_DONE = r"- \d+s \d+(us|ms|s)/step"
_NUM = r"\d\.\d{4}(e[+-]\d\d)?"  # 0.4123, or 0.0000e+00 as tf.keras writes a value near 0


class FakeClock:
    """A clock that moves `step` seconds on every reading."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


@pytest.fixture
def terminal(monkeypatch):
    monkeypatch.setattr(progbar, "is_interactive", lambda: True)


@pytest.fixture
def not_a_terminal(monkeypatch):
    monkeypatch.setattr(progbar, "is_interactive", lambda: False)


def test_the_bar_in_keras_form_with_eta_and_loss(terminal, capsys, monkeypatch):
    times = iter([0.0] + [1.0 + 0.1 * k for k in range(47)])   # the first step is slow
    monkeypatch.setattr(progbar, "_clock", lambda: next(times))
    bar = progbar.Progbar(47)
    for step in range(1, 13):
        bar.update(step, [("loss", 0.4123)])
    out = capsys.readouterr().out
    last = out.rsplit("\r", 1)[1]
    # 35 steps left at 0.1 s each (the first step left out of the mean)
    assert last == "12/47 [" + "=" * 6 + ">" + "." * 23 + "] - ETA: 3s - loss: 0.4123"
    assert out.count("\r") == 12 and "\n" not in out
    for step in range(13, 48):
        bar.update(step, [("loss", 0.4123)])
    last = capsys.readouterr().out.rsplit("\r", 1)[1]
    assert last == "47/47 [==============================] - 6s 100ms/step - loss: 0.4123\n"


def test_the_bar_averages_a_metric_over_steps_unless_it_is_stateful(not_a_terminal, capsys):
    bar = progbar.Progbar(2, stateful_metrics=["acc"])
    bar.update(1, [("loss", 1.0), ("acc", 0.5)])
    assert capsys.readouterr().out == ""       # not a terminal: nothing until the line ends
    bar.update(2, [("loss", 3.0), ("acc", 0.75)])
    out = capsys.readouterr().out
    assert re.fullmatch(r"2/2 \[=+\] " + _DONE + r" - loss: 2\.0000 - acc: 0\.7500\n", out), out


def test_a_shorter_redraw_clears_the_longer_one(terminal, capsys, monkeypatch):
    monkeypatch.setattr(progbar, "_clock", FakeClock(1.0))
    bar = progbar.Progbar(3)
    bar.update(1, [("loss", 123.25)], finalize=False)
    bar.update(2, [("loss", 1.0)], finalize=False)
    first, second = capsys.readouterr().out.split("\r")[1:]
    assert len(second) == len(first) and second.endswith(" ")


def test_unknown_steps_count_up_then_draw_a_full_bar(terminal, capsys, monkeypatch):
    monkeypatch.setattr(progbar, "_clock", FakeClock(1.0))
    bar = progbar.Progbar(None)
    bar.update(1, finalize=False)
    bar.update(2, finalize=False)
    bar.finish()
    lines = capsys.readouterr().out.split("\r")[1:]
    assert lines[0] == "      1/Unknown" and lines[1] == "      2/Unknown"
    assert lines[2] == "2/2 [==============================] - 3s 2s/step\n"


def test_verbose_2_is_one_line_when_done_and_0_nothing(terminal, capsys, monkeypatch):
    monkeypatch.setattr(progbar, "_clock", FakeClock(0.5))
    bar = progbar.Progbar(4, verbose=2)
    for step in range(1, 5):
        bar.update(step, [("loss", 0.25)])
    assert capsys.readouterr().out == "4/4 - 2s - 500ms/step - loss: 0.2500\n"
    quiet = progbar.Progbar(4, verbose=0)
    for step in range(1, 5):
        quiet.update(step, [("loss", 0.25)])
    assert capsys.readouterr().out == ""


def test_the_formats():
    assert progbar.format_eta(3.9) == "3s" and progbar.format_eta(125) == "2:05"
    assert progbar.format_eta(3725) == "1:02:05"
    assert progbar.format_duration(0.021, "step") == " 21ms/step"
    assert progbar.format_duration(0.00035, "step") == " 350us/step"
    assert progbar.format_value(0.41234) == "0.4123" and progbar.format_value(1e-5) == "1.0000e-05"
    assert tf.keras.utils.Progbar is progbar.Progbar


# ---------------------------------------------------------------- fit, evaluate, predict

def _model():
    rng = np.random.RandomState(0)
    x = rng.randn(8, 3).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 0).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid",
                                                       input_shape=(3,))])
    model.compile("sgd", "binary_crossentropy", metrics=["accuracy"])
    return model, x, y


_BAR_LINE = r"4/4 \[==============================\] " + _DONE + rf" - loss: {_NUM} - acc: {_NUM}"


def test_fit_on_a_terminal_redraws_the_bar_in_place(terminal, capsys, monkeypatch):
    monkeypatch.setattr(progbar, "_clock", FakeClock(0.1))   # every batch is drawn
    model, x, y = _model()
    history = model.fit(x, y, batch_size=2, epochs=2, verbose=1)
    out = capsys.readouterr().out
    epochs = out.split("Epoch ")[1:]
    assert [e.split("\n", 1)[0] for e in epochs] == ["1/2", "2/2"]
    for text in epochs:
        draws = text.split("\n", 1)[1].split("\r")[1:]
        assert len(draws) == 5                  # batches 1-4 as they run, then the epoch's line
        for step, draw in enumerate(draws[:4], 1):
            assert re.fullmatch(rf"{step}/4 \[[=>.]{{30}}\] - ETA: \d+s - loss: {_NUM} - "
                                rf"acc: {_NUM} *", draw), draw   # spaces blank a longer line
        assert re.fullmatch(_BAR_LINE + r" *\n", draws[4]), draws[4]
    loss = float(re.search(r"loss: ([^ ]+) -", epochs[1].rsplit("\r", 1)[1]).group(1))
    assert loss == pytest.approx(history.history["loss"][1], abs=1e-4)


def test_fit_into_a_file_prints_the_last_line_of_each_epoch_only(not_a_terminal, capsys):
    model, x, y = _model()
    model.fit(x, y, batch_size=2, epochs=2, verbose=1, validation_data=(x, y))
    lines = capsys.readouterr().out.split("\n")
    assert "\r" not in "".join(lines) and "ETA" not in "".join(lines)
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and lines[4] == ""
    for line in (lines[1], lines[3]):
        assert re.fullmatch(_BAR_LINE + rf" - val_loss: {_NUM} - val_acc: {_NUM}", line), line


def test_fit_verbose_2_prints_one_line_an_epoch_and_0_nothing(terminal, capsys):
    model, x, y = _model()
    model.fit(x, y, batch_size=2, epochs=2, verbose=2)
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 5
    assert re.fullmatch(rf"4/4 - \d+s - \d+(us|ms|s)/step - loss: {_NUM} - acc: {_NUM}",
                        lines[3]), lines[3]
    model.fit(x, y, batch_size=2, epochs=2, verbose=0)
    assert capsys.readouterr().out == ""


def test_a_dataset_without_steps_counts_them_in_the_first_epoch(not_a_terminal, capsys):
    model, x, y = _model()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(2)
    model.fit(dataset, epochs=2, verbose=1)
    lines = capsys.readouterr().out.split("\n")
    assert re.fullmatch(_BAR_LINE, lines[1]) and re.fullmatch(_BAR_LINE, lines[3]), lines


def test_evaluate_and_predict_show_a_bar_as_tf_keras(not_a_terminal, capsys):
    model, x, y = _model()
    loss, accuracy = model.evaluate(x, y, batch_size=2, verbose=1)
    out = capsys.readouterr().out
    assert re.fullmatch(_BAR_LINE + r"\n", out), out
    assert f"loss: {loss:.4f} - acc: {accuracy:.4f}" in out
    model.evaluate(x, y, batch_size=2, verbose=0)
    model.predict(x, batch_size=2)                   # predict is quiet by default
    assert capsys.readouterr().out == ""
    model.predict(x, batch_size=2, verbose=1)
    assert re.fullmatch(r"4/4 \[=+\] " + _DONE + r"\n", capsys.readouterr().out)
