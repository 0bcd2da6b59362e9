"""`tf.keras.utils.Progbar`: the progress bar `fit`, `evaluate` and `predict` print with
`verbose=1`, and the one line per epoch of `verbose=2`.

    12/47 [=======>......................] - ETA: 3s - loss: 0.4123
    47/47 [==============================] - 1s 21ms/step - loss: 0.3518 - val_loss: 0.3702

On a terminal (or in a notebook) the bar is redrawn in place (`\\r`) as the batches run, at most
every `interval` seconds, and its last form (the time taken and the step time in place of the ETA)
ends the line. Written to a file or a pipe, only that last line is printed: a log holds one line an
epoch, not one per redraw. (tf_keras redraws with `\\b` and `\\r` on every POSIX system, even into
a file; Keras 3 prints a new line per redraw.) The ETA is the steps left times the mean step time,
the first step left out where there are others (it includes building the plan). A metric is
shown as the mean of the values given for it, weighted by the steps each covers, or as given for
the names in `stateful_metrics` (the running means `fit` computes itself).
"""

import os
import sys
import time

_clock = time.monotonic


def is_interactive():
    """Whether the output can be redrawn in place: a terminal, a notebook, PyCharm's console."""
    try:
        if sys.stdout.isatty():
            return True
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        pass
    return "ipykernel" in sys.modules or "PYCHARM_HOSTED" in os.environ


def format_duration(seconds, unit):
    """' 21ms/step', ' 2s/epoch', ' 350us/step' (tf.keras's forms)."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit}"
    return f" {seconds * 1e6:.0f}us/{unit}"


def format_eta(seconds):
    """'3s', '2:05', '1:02:05'."""
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if seconds >= 60:
        return f"{seconds // 60}:{seconds % 60:02d}"
    return f"{seconds}s"


def format_value(value):
    return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"


class Progbar:
    """A progress bar over `target` steps (None: unknown, shown as 'N/Unknown').

    verbose: 1 the bar (redrawn in place on a terminal, else its last line only), 2 one line when
    it finishes, 0 nothing. `update(current, values)` after each step: values are `(name, value)`
    pairs; `finalize=True` (or reaching `target`) ends the line."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None,
                 unit_name="step"):
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self._dynamic = is_interactive()
        self._values = {}          # name -> [weighted sum, weight], or the value (stateful)
        self._seen_so_far = 0
        self._start = _clock()
        self._after_first_step = None
        self._last_update = None
        self._drawn_width = 0

    def update(self, current, values=None, finalize=None):
        """Records step `current` (1-based count of steps done) and redraws the bar."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or ():
            if name in self.stateful_metrics:
                self._values[name] = value
                continue
            weight = max(current - self._seen_so_far, 1)
            total = self._values.setdefault(name, [0.0, 0])
            total[0] += float(value) * weight
            total[1] += weight
        now = _clock()
        step_time = self._step_time(current, now)
        self._seen_so_far = current
        if self.verbose == 1 and (finalize or self._dynamic):
            if not finalize and self._last_update is not None and \
                    now - self._last_update < self.interval:
                return
            self._write_bar(current, now, step_time, finalize)
        elif self.verbose == 2 and finalize:
            target = self.target if self.target is not None else current
            self._write(f"{current}/{target} - {now - self._start:.0f}s -"
                        f"{format_duration(step_time, self.unit_name)}{self._metrics()}\n")
        self._last_update = now

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    def finish(self, values=None):
        """Ends the bar at the steps seen so far, with `values` (the epoch's logs) last."""
        self.update(self._seen_so_far, values, finalize=True)

    @property
    def seen(self):
        """The steps counted so far."""
        return self._seen_so_far

    # ------------------------------------------------------------------ drawing
    def _write_bar(self, current, now, step_time, finalize):
        if finalize and self.target is None:
            self.target = current        # the count is known now: draw a full bar
        line = self._bar(current)
        if finalize:
            line += f" - {now - self._start:.0f}s{format_duration(step_time, self.unit_name)}"
        elif self.target is not None:
            line += f" - ETA: {format_eta(step_time * (self.target - current))}"
        line += self._metrics()
        if self._dynamic:
            padding = " " * max(self._drawn_width - len(line), 0)
            self._drawn_width = len(line)
            self._write("\r" + line + padding + ("\n" if finalize else ""))
        else:
            self._write(line + "\n")

    def _bar(self, current):
        if self.target is None:
            return f"{current:7d}/Unknown"
        done = int(self.width * min(current / self.target, 1.0)) if self.target else self.width
        bar = ("=" * (done - 1) + (">" if current < self.target else "=")) if done > 0 else ""
        digits = len(str(self.target))
        return f"{current:{digits}d}/{self.target} [{bar}{'.' * (self.width - done)}]"

    def _metrics(self):
        text = ""
        for name, value in self._values.items():
            if isinstance(value, list):
                value = value[0] / max(value[1], 1)
            text += f" - {name}: {format_value(float(value))}"
        return text

    def _step_time(self, current, now):
        """The mean time of a step, the first one left out once there are others."""
        if not current:
            return 0.0
        if self._after_first_step is not None and current > 1:
            return (now - self._after_first_step) / (current - 1)
        if current == 1 and self._after_first_step is None:
            self._after_first_step = now
        return (now - self._start) / current

    @staticmethod
    def _write(text):
        sys.stdout.write(text)
        sys.stdout.flush()


__all__ = ["Progbar"]
