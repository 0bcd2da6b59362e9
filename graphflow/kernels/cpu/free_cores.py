"""How many of the CPUs this process may run on other processes leave free: a kernel call uses at
most that many threads (`usable_threads`: the intra-op pool's `run_shared`, oneDNN's products and
convolutions, the OpenMP team's loops), whatever its session's intra-op thread count allows.

On a machine where another process keeps a core busy, a kernel split over every core waits for
its slowest part, the one whose thread the scheduler parked behind that process: on 2 cores with
a CPU-burning process beside it, the 784-512-512-10 Adam training step took 6.49 ms on two
threads and 5.84 ms on one (TF1: 6.00; the CIFAR-shaped step 49.0 and 46.3 ms, TF1 45.6), and
`benchmarks/bench_vs_tf1.py --setting busy` measures it. So the count adapts to the machine, as
the issue of owning the threads asks: from /proc/stat, the busy time of the CPUs in this process's
affinity mask over the last `REFRESH_SECONDS`, minus this process's own CPU time (`os.times`; its
threads run only on those CPUs), is what other processes used; each `BUSY_CORE` of a core they used
takes one core away (at least one stays). A refresh happens on the first call after the interval
(one read of /proc/stat, ~20 us), so it follows a machine that becomes busy or quiet again within
a fraction of a second.

The values do not change with the count: the pool's callers cut their work the same way and only
run more of the pieces on the calling thread; a oneDNN product the chooser runs as a team runs as
the one-thread primitive (the same bits), one it runs in blocks runs the same blocks one after the
other (a product whose two ways differ is pinned to one: `dnnl_matmul._Plan.pinned_way`); a
convolution's images give the same bits in any block (`dnnl_conv.py`).

The sensor also says which CPU the other processes keep busy (`busy_cpu`): each CPU's busy time
minus the time this process's threads ran on it (/proc/self/task/*/stat: a thread's CPU time,
counted on the CPU it ran on last). `busy_core_share.py` shares convolutions with a thread on that
CPU; while it does, the other process gets only part of that CPU, so the CPU stays counted as busy
down to half of `BUSY_CORE` (`shared` set by that module), and the count does not flap between
one free core and two. With every CPU taken by other processes there is no busy CPU to share, nor
while another graphflow process runs kernels on the machine (`RunningPeers`: a heartbeat file per
process in /dev/shm, touched at each refresh), which would share this one's CPU back.

Where /proc/stat cannot be read (not Linux), or with GRAPHFLOW_ADAPT_THREADS=0, every CPU counts
as free: the session's thread count is used as given.
"""

import atexit
import contextlib
import os
import tempfile
import threading
import time

ENV_SWITCH = "GRAPHFLOW_ADAPT_THREADS"
REFRESH_SECONDS = 0.2
# Other processes using this much of a core on average over a refresh interval take one core.
BUSY_CORE = 0.6
_STAT = "/proc/stat"


def _own_cpu_seconds():
    times = os.times()
    return times.user + times.system


def _thread_cpu_ticks():
    """[(thread id, CPU ticks it used, the CPU it ran on last)] of this process's threads."""
    threads = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                text = f.read()
        except OSError:  # the thread ended
            continue
        fields = text[text.rindex(")") + 2:].split()  # from field 3 (state) on
        threads.append((int(tid), int(fields[11]) + int(fields[12]), int(fields[36])))
    return threads


PEER_PREFIX = "graphflow-running-"
# A graphflow process whose heartbeat file is younger than this is running kernels.
PEER_SECONDS = 1.0
STALE_SECONDS = 24 * 3600.0


class RunningPeers:
    """Heartbeat files of the graphflow processes on this machine that run kernels: each sensor
    refresh touches this process's file (`directory`/graphflow-running-<pid>, removed at exit),
    and `others_active` says whether another process's file is younger than PEER_SECONDS."""

    def __init__(self, directory=None, clock=time.time):
        if directory is None:
            directory = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        self._dir, self._clock = directory, clock
        self._path = None

    def beat(self):
        path = os.path.join(self._dir, f"{PEER_PREFIX}{os.getpid()}")
        try:
            if path == self._path:
                try:
                    os.utime(path)
                    return
                except FileNotFoundError:  # removed by someone else: made again below
                    pass
            with open(path, "a"):
                pass
        except OSError:  # no writable directory: peers cannot see this process
            return
        if self._path is None:
            atexit.register(self._remove)
        self._path = path

    def _remove(self):
        with contextlib.suppress(OSError):
            if self._path is not None:
                os.remove(self._path)

    def others_active(self):
        now, own = self._clock(), self._path
        try:
            with os.scandir(self._dir) as entries:
                for entry in entries:
                    if entry.name.startswith(PEER_PREFIX) and entry.path != own:
                        with contextlib.suppress(OSError):
                            age = now - entry.stat().st_mtime
                            if age < PEER_SECONDS:
                                return True
                            if age > STALE_SECONDS:  # left by a process that did not exit cleanly
                                os.remove(entry.path)
        except OSError:
            pass
        return False


class FreeCores:
    """The free-core count, refreshed at most every REFRESH_SECONDS (see the module docstring).
    `read_stat` returns the text of /proc/stat (tests give their own); `peers`, a RunningPeers
    (None: not looked at), the other graphflow processes running kernels."""

    def __init__(self, read_stat=None, own_seconds=_own_cpu_seconds, clock=time.monotonic,
                 thread_ticks=_thread_cpu_ticks, peers=None):
        self._read_stat = read_stat or self._proc_stat
        self._own_seconds, self._clock = own_seconds, clock
        self._thread_ticks = thread_ticks
        self._peers = peers
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        """Forget the last sample (a fork's child, a test): every CPU free until measured again."""
        if hasattr(os, "sched_getaffinity"):
            self._cpus = frozenset(f"cpu{k}" for k in os.sched_getaffinity(0))
        else:
            self._cpus = frozenset()
        self.free = max(1, len(self._cpus) or (os.cpu_count() or 1))
        self.busy_cpu = None  # the CPU other processes use most, where they take a core
        self.shared = False  # set by busy_core_share when it ran work on busy_cpu (since a refresh)
        self._last = None
        self._last_threads, self._threads_read_at = {}, None
        self._next = 0.0
        self.enabled = os.environ.get(ENV_SWITCH, "1").strip() != "0" and bool(self._cpus)
        self._ticks_per_second = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    @staticmethod
    def _proc_stat():
        with open(_STAT) as f:
            return f.read()

    def _busy_seconds(self):
        """{CPU number: seconds it spent not idle since boot} of this process's affinity mask."""
        busy = {}
        for line in self._read_stat().splitlines():
            fields = line.split()
            if fields and fields[0] in self._cpus:
                # user nice system idle iowait irq softirq steal (guest time is in user)
                values = [int(v) for v in fields[1:9]]
                busy[int(fields[0][3:])] = (sum(values) - values[3] - values[4]) \
                    / self._ticks_per_second
        return busy

    def _own_per_cpu(self, now, since):
        """{CPU number: seconds this process's threads ran on it since the refresh at `since`},
        each thread's time counted on the CPU it ran on last; None when the threads were not read
        at that refresh (they are read only while other processes take a core: ~30 us a thread)."""
        seen, per_cpu = {}, {}
        for tid, ticks, cpu in self._thread_ticks():
            seen[tid] = ticks
            used = ticks - self._last_threads.get(tid, 0)
            per_cpu[cpu] = per_cpu.get(cpu, 0.0) + used / self._ticks_per_second
        complete = self._threads_read_at == since
        self._last_threads, self._threads_read_at = seen, now
        return per_cpu if complete else None

    def count(self):
        """The number of CPUs free for this process now (at least 1)."""
        if not self.enabled:
            return self.free
        now = self._clock()
        if now >= self._next and self._lock.acquire(blocking=False):
            try:
                self._refresh(now)
            except (OSError, ValueError, IndexError):  # unreadable or unexpected: stop adapting
                self.enabled = False
            finally:
                self._lock.release()
        return self.free

    def _refresh(self, now):
        self._next = now + REFRESH_SECONDS
        if self._peers is not None:
            self._peers.beat()
        sample = (now, self._busy_seconds(), self._own_seconds())
        last, self._last = self._last, sample
        if last is None:
            return
        wall = sample[0] - last[0]
        if wall <= 0:
            return
        busy = {cpu: seconds - last[1].get(cpu, seconds) for cpu, seconds in sample[1].items()}
        others = (sum(busy.values()) - (sample[2] - last[2])) / wall
        # sharing the busy CPU in the interval left the other process about half of it
        shared, self.shared = self.shared, False
        threshold = BUSY_CORE / 2 if shared else BUSY_CORE
        taken = int(max(0.0, others) + (1.0 - threshold))
        self.free = max(1, len(self._cpus) - taken)
        own_on = self._own_per_cpu(now, last[0]) if 0 < taken < len(busy) else None
        self.busy_cpu = None if own_on is None else self._busy_cpu(busy, own_on, wall, threshold)

    def _busy_cpu(self, busy, own_on, wall, threshold):
        """The CPU other processes used most over the interval (`busy`: each CPU's busy seconds,
        `own_on`: this process's), where they used at least `threshold` of it; else None."""
        others_on = {cpu: (seconds - own_on.get(cpu, 0.0)) / wall for cpu, seconds in busy.items()}
        cpu = max(others_on, key=others_on.get)
        # only while another CPU is left mostly free: with every CPU taken, the caller pinned
        # beside another process lost more than the helper gained (two CPU hogs on 2 CPUs, the
        # tf.layers ResNet step: 33.8 ms on one thread, 46.6 shared)
        free_left = min(v for c, v in others_on.items() if c != cpu) < 1.0 - BUSY_CORE
        # nor when the other process may be graphflow too: it would share this process's CPU
        # back, and each would pin its caller beside the other's helper (two CIFAR-shaped steps
        # side by side on 2 CPUs: 34.5 and 38.4 ms alone, 43.4 and 39.7 shared)
        if (others_on[cpu] < threshold or not free_left
                or (self._peers is not None and self._peers.others_active())):
            return None
        return cpu


SENSOR = FreeCores(peers=RunningPeers())


def usable_threads(threads):
    """`threads` (a session's intra-op count), or fewer where other processes keep cores busy."""
    if threads <= 1 or not SENSOR.enabled:
        return threads
    return min(threads, SENSOR.count())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SENSOR.reset)
