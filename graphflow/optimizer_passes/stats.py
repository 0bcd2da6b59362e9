"""What a pass reports (`PassStats`) and what a pipeline run reports (`OptimizationReport`)."""

import dataclasses
import time


@dataclasses.dataclass
class PassStats:
    """One pass run: ops before/after, how many rewrites it made, seconds taken, pass details."""

    name: str
    ops_before: int = 0
    ops_after: int = 0
    rewrites: int = 0
    seconds: float = 0.0
    details: dict = dataclasses.field(default_factory=dict)


class Timer:
    """`with Timer(stats, graph):` fills ops_before/ops_after and seconds around a pass body."""

    def __init__(self, stats, graph):
        self.stats = stats
        self.graph = graph

    def __enter__(self):
        self.stats.ops_before = self.graph.num_ops()
        self._t0 = time.perf_counter()
        return self.stats

    def __exit__(self, *exc):
        self.stats.seconds = time.perf_counter() - self._t0
        self.stats.ops_after = self.graph.num_ops()


class OptimizationReport:
    """Per-pass statistics of one pipeline run; `str(report)` is a table."""

    def __init__(self, passes):
        self.passes = list(passes)
        # [(op name, op type, CPU implementation)] of the optimized graph's ops, in graph order:
        # which kernel a plan of it would choose for each op (`graphflow.optimize` fills it)
        self.kernels = []

    @property
    def ops_before(self):
        return self.passes[0].ops_before if self.passes else 0

    @property
    def ops_after(self):
        return self.passes[-1].ops_after if self.passes else 0

    @property
    def seconds(self):
        return sum(p.seconds for p in self.passes)

    def __getitem__(self, name):
        for p in self.passes:
            if p.name == name:
                return p
        raise KeyError(f"no pass named '{name}' ran; ran: {[p.name for p in self.passes]}")

    def as_dicts(self):
        return [{"pass": p.name, "ops_before": p.ops_before, "ops_after": p.ops_after,
                 "rewrites": p.rewrites, "ms": round(p.seconds * 1e3, 3)} for p in self.passes]

    def __str__(self):
        rows = [("pass", "ops before", "ops after", "rewrites", "time (ms)")]
        for p in self.passes:
            rows.append((p.name, str(p.ops_before), str(p.ops_after), str(p.rewrites),
                         f"{p.seconds * 1e3:.2f}"))
        rows.append(("total", str(self.ops_before), str(self.ops_after),
                     str(sum(p.rewrites for p in self.passes)), f"{self.seconds * 1e3:.2f}"))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = []
        for n, r in enumerate(rows):
            lines.append("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                                   for i, c in enumerate(r)))
            if n == 0 or n == len(rows) - 2:
                lines.append("  ".join("-" * w for w in widths))
        if self.kernels:
            lines += ["", "CPU kernels chosen (op type: implementation x ops)"]
            lines += [f"  {op_type}: {impl} x{count}"
                      for (op_type, impl), count in self.kernel_counts().items()]
        return "\n".join(lines)

    def kernel_counts(self):
        """{(op type, implementation): number of ops}, sorted by op type then implementation."""
        return count_kernel_choices(self.kernels)

    __repr__ = __str__


def count_kernel_choices(choices):
    """{(op type, implementation): number of ops} of [(op name, op type, implementation)], sorted
    by op type then implementation (the optimize report's and `graphflow inspect`'s table)."""
    counts = {}
    for _, op_type, impl in choices:
        counts[op_type, impl] = counts.get((op_type, impl), 0) + 1
    return dict(sorted(counts.items()))
