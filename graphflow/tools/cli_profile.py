"""`graphflow profile`: what the traced runs of a saved graph say, as a table a reader can trust
on a busy machine.

One number per run (the sum of its ops' times) and, per op, the median and the mean time of one
call, its total over all calls and its share of the total, each labelled with how many runs or
calls it is over. On a loaded machine a few runs are slowed by other processes: a mean or a total
then mixes them in, while a median is what a typical run took, so the run median is printed
beside the per-op medians (whose sum is close to it) and an op whose mean is over twice its
median is pointed out.
"""

import statistics

from graphflow.tools.cli_text import printable

SKEWED = 2.0  # an op's mean above this many times its median: a few slow calls weigh on it


def op_rows(runs):
    """[(op type, node name, kernel, [micros of each call])] over the runs' step stats, largest
    total first."""
    calls = {}
    for step_stats in runs:
        for node in step_stats.node_stats():
            calls.setdefault((node.op, node.node_name, node.kernel), []).append(
                node.all_end_rel_micros)
    rows = [(op, name, kernel, times) for (op, name, kernel), times in calls.items()]
    rows.sort(key=lambda r: (-sum(r[3]), r[1]))
    return rows


def report(label, runs, top, out):
    """Print the header (runs and their median), the top ops and a note on skewed means."""
    rows = op_rows(runs)
    per_run = [sum(n.all_end_rel_micros for n in s.node_stats()) for s in runs]
    total = sum(sum(r[3]) for r in rows) or 1
    n = len(runs)
    print(printable(f"{label}: {n} traced run(s) after 1 warm-up, {len(rows)} ops"), file=out)
    medians = sum(statistics.median(r[3]) for r in rows)
    print(f"op time per run ({n} runs): median {statistics.median(per_run) / 1000:.3f} ms, "
          f"min {min(per_run) / 1000:.3f}, max {max(per_run) / 1000:.3f}; the per-op medians "
          f"add up to {medians / 1000:.3f} ms", file=out)
    calls = f"its {n} calls (one per run)" if all(len(r[3]) == n for r in rows) else \
        "its calls ('calls')"
    print(f"per op, over {calls}: median and mean us per call, total ms of all calls, share of "
          "all op time", file=out)
    print(f"{'median us':>10} {'mean us':>10} {'total ms':>10} {'share':>6} {'calls':>6}  "
          f"{'op type':<22} {'kernel':<10} node", file=out)
    skewed = []
    for op_type, name, kernel, times in rows[:top]:
        median, mean = statistics.median(times), statistics.fmean(times)
        if mean > SKEWED * median and len(times) > 1:
            skewed.append(name)
        print(f"{median:>10.1f} {mean:>10.1f} {sum(times) / 1000:>10.3f} "
              f"{100 * sum(times) / total:>5.1f}% {len(times):>6}  {printable(op_type):<22} "
              f"{printable(kernel or '-'):<10} {printable(name)}", file=out)
    if skewed:
        shown = ", ".join(skewed[:3]) + (f" and {len(skewed) - 3} more" if len(skewed) > 3 else "")
        print(printable(f"note: the mean of {shown} is over {SKEWED:g}x the median: a few slow "
                        "calls (other processes on the machine, a first-use cost) weigh on "
                        "means, totals and shares; the medians are a typical run"), file=out)


__all__ = ["op_rows", "report"]
