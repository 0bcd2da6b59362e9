"""graphflow.kernels.cpu.free_cores: the free-core count follows the busy time other processes
leave on this process's CPUs (its own CPU time subtracted), refreshes at most every
REFRESH_SECONDS, keeps at least one core, and the intra-op pool and oneDNN's products then use
no more threads than that, with the same values."""

import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import free_cores
from graphflow.kernels.cpu.onednn import dnnl_matmul
from graphflow.kernels.cpu.threads import intra_op

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux only")


class FakeMachine:
    """/proc/stat text for this process's CPUs, its busy ticks advanced by hand."""

    def __init__(self):
        self.cpus = sorted(os.sched_getaffinity(0))
        self.busy = 0.0  # seconds, over all CPUs
        self.own = 0.0
        self.now = 0.0

    def stat(self):
        hz = os.sysconf("SC_CLK_TCK")
        per_cpu = int(self.busy * hz / len(self.cpus))
        lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
        # user nice system idle iowait irq softirq steal guest guest_nice: busy split over
        # user and steal, idle and iowait large (not counted)
        lines += [f"cpu{k} {per_cpu - per_cpu // 4} 0 0 999999 5000 0 0 {per_cpu // 4} 0 0"
                  for k in self.cpus]
        lines.append("cpu999 99999 0 0 0 0 0 0 0 0 0")  # not in the affinity mask: ignored
        return "\n".join(lines) + "\nintr 1 2 3\n"

    def advance(self, seconds, others, own=0.0):
        """`seconds` pass; other processes use `others` cores, this one `own`."""
        self.now += seconds
        self.busy += (others + own) * seconds
        self.own += own * seconds


@pytest.fixture
def machine(monkeypatch):
    monkeypatch.setenv(free_cores.ENV_SWITCH, "1")
    fake = FakeMachine()
    sensor = free_cores.FreeCores(read_stat=fake.stat, own_seconds=lambda: fake.own,
                                  clock=lambda: fake.now)
    return fake, sensor


def test_a_busy_core_is_taken_away_and_given_back(machine):
    fake, sensor = machine
    n = len(fake.cpus)
    assert sensor.count() == n  # the first sample: nothing to compare yet
    fake.advance(0.3, others=1.0, own=max(0, n - 1))
    assert sensor.count() == max(1, n - 1)
    fake.advance(0.05, others=0.0)
    assert sensor.count() == max(1, n - 1), "refreshed at most every REFRESH_SECONDS"
    fake.advance(0.3, others=0.0, own=n)  # this process's own threads do not count
    assert sensor.count() == n


def test_light_use_by_others_takes_nothing_and_one_core_always_stays(machine):
    fake, sensor = machine
    n = len(fake.cpus)
    sensor.count()
    fake.advance(0.3, others=free_cores.BUSY_CORE - 0.1)
    assert sensor.count() == n
    fake.advance(0.3, others=n + 3.0)
    assert sensor.count() == 1


def test_unreadable_stat_stops_adapting(monkeypatch):
    monkeypatch.setenv(free_cores.ENV_SWITCH, "1")

    def broken():
        raise OSError("no /proc")
    sensor = free_cores.FreeCores(read_stat=broken)
    assert sensor.enabled
    assert sensor.count() == len(os.sched_getaffinity(0))
    assert not sensor.enabled


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(free_cores.ENV_SWITCH, "0")
    assert not free_cores.FreeCores().enabled


@pytest.fixture
def one_core_free(monkeypatch):
    monkeypatch.setattr(free_cores.SENSOR, "enabled", True)
    monkeypatch.setattr(free_cores.SENSOR, "count", lambda: 1)


def test_the_pool_runs_on_the_caller_alone_when_one_core_is_free(one_core_free):
    assert free_cores.usable_threads(4) == 1 and free_cores.usable_threads(1) == 1
    before = intra_op.POOL.helper_calls
    ran = []
    intra_op.POOL.run_shared(lambda: ran.append(1), 2)
    assert ran == [1] and intra_op.POOL.helper_calls == before


@pytest.mark.parametrize("way", ["team", "blocks"])
def test_a_session_on_a_busy_machine_gives_the_same_values(way, monkeypatch):
    """An MLP step on two threads, then with the sensor reporting one free core: the same bits,
    with the chooser's products as a team or in blocks (a team's product on one thread is the
    one-thread primitive's; blocks run one after the other)."""
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", way)
    monkeypatch.setattr(dnnl_matmul, "_plans", type(dnnl_matmul._plans)())

    def step():
        tf.reset_default_graph()
        rng = np.random.default_rng(0)
        x = tf.constant(rng.standard_normal((256, 784), np.float32))
        w = tf.Variable(rng.standard_normal((784, 512), np.float32) * 0.05)
        h = tf.nn.relu(tf.matmul(x, w))
        loss = tf.reduce_mean(tf.tanh(h) * h)
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            return sess.run([loss, w])
    want = step()
    monkeypatch.setattr(free_cores.SENSOR, "enabled", True)
    monkeypatch.setattr(free_cores.SENSOR, "count", lambda: 1)
    calls_before = intra_op.POOL.helper_calls
    got = step()
    assert intra_op.POOL.helper_calls == calls_before
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


class PerCpuMachine:
    """/proc/stat with each CPU's busy seconds given, and this process's threads' ticks."""

    def __init__(self, cpus):
        self.cpus = cpus
        self.busy = {k: 0.0 for k in cpus}
        self.threads = {}  # tid -> [ticks, cpu]
        self.now = 0.0
        self.hz = os.sysconf("SC_CLK_TCK")

    def stat(self):
        lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
        lines += [f"cpu{k} {int(self.busy[k] * self.hz)} 0 0 999999 0 0 0 0 0 0" for k in self.cpus]
        return "\n".join(lines) + "\n"

    def own(self):
        return sum(t[0] for t in self.threads.values()) / self.hz

    def thread_ticks(self):
        return [(tid, ticks, cpu) for tid, (ticks, cpu) in self.threads.items()]

    def advance(self, seconds, others_on, own_on):
        """Other processes use `others_on` {cpu: cores}, this one's threads `own_on` {tid: (cpu,
        cores)}."""
        self.now += seconds
        for cpu, cores in others_on.items():
            self.busy[cpu] += cores * seconds
        for tid, (cpu, cores) in own_on.items():
            ticks = self.threads.setdefault(tid, [0, cpu])
            ticks[0] += round(cores * seconds * self.hz)
            ticks[1] = cpu
            self.busy[cpu] += cores * seconds


def test_the_busy_cpu_is_the_one_other_processes_use(monkeypatch):
    """Both CPUs fully busy, one with this process's thread, the other with another process: the
    other one is the busy CPU (this process's time on each CPU subtracted, its threads read only
    while a core is taken); while the busy CPU is shared (`busy_core_share`), the other process
    keeps it busy at half of BUSY_CORE."""
    monkeypatch.setenv(free_cores.ENV_SWITCH, "1")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs in the affinity mask")
    a, b = cpus[:2]
    fake = PerCpuMachine(cpus)
    sensor = free_cores.FreeCores(read_stat=fake.stat, own_seconds=fake.own,
                                  clock=lambda: fake.now, thread_ticks=fake.thread_ticks)
    sensor.count()
    fake.advance(0.3, others_on={b: 1.0}, own_on={1: (a, 1.0)})
    assert sensor.count() == len(cpus) - 1
    assert sensor.busy_cpu is None, "the threads are read from the first busy interval on"
    fake.advance(0.3, others_on={b: 1.0}, own_on={1: (a, 1.0)})
    assert sensor.count() == len(cpus) - 1 and sensor.busy_cpu == b
    sensor.shared = True  # a helper on b took half of it
    fake.advance(0.3, others_on={b: 0.5}, own_on={1: (a, 1.0), 2: (b, 0.5)})
    assert sensor.count() == len(cpus) - 1 and sensor.busy_cpu == b
    fake.advance(0.3, others_on={b: 0.5}, own_on={1: (a, 1.0), 2: (b, 0.5)})
    assert sensor.count() == len(cpus) and sensor.busy_cpu is None, \
        "not shared in that interval: half a core is not busy"
    reads = []
    sensor._thread_ticks = lambda: reads.append(1) or fake.thread_ticks()
    fake.advance(0.3, others_on={}, own_on={1: (a, 1.0)})
    assert sensor.count() == len(cpus) and not reads, "no thread read on a quiet machine"
    fake.advance(0.3, others_on={}, own_on={1: (b, 1.0)})
    assert sensor.count() == len(cpus) and sensor.busy_cpu is None


def test_no_busy_cpu_to_share_when_other_processes_take_every_cpu(monkeypatch):
    monkeypatch.setenv(free_cores.ENV_SWITCH, "1")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) != 2:
        pytest.skip("needs exactly two CPUs in the affinity mask")
    a, b = cpus
    fake = PerCpuMachine(cpus)
    sensor = free_cores.FreeCores(read_stat=fake.stat, own_seconds=fake.own,
                                  clock=lambda: fake.now, thread_ticks=fake.thread_ticks)
    sensor.count()
    for _ in range(3):  # two CPU-burning processes and this one's thread: 2/3 of a CPU each
        fake.advance(0.3, others_on={a: 0.67, b: 0.67}, own_on={1: (a, 0.33), 2: (b, 0.33)})
        assert sensor.count() == 1 and sensor.busy_cpu is None
    for _ in range(3):
        fake.advance(0.3, others_on={a: 0.8, b: 1.0}, own_on={1: (a, 0.2)})
        assert sensor.count() == 1 and sensor.busy_cpu is None


def test_running_peers_are_the_other_processes_fresh_heartbeat_files(tmp_path):
    now = [1000.0]
    peers = free_cores.RunningPeers(str(tmp_path), clock=lambda: now[0])
    assert not peers.others_active()
    peers.beat()
    own = tmp_path / f"{free_cores.PEER_PREFIX}{os.getpid()}"
    assert own.exists()
    os.utime(own, (now[0], now[0]))
    assert not peers.others_active(), "this process's own file does not count"
    other = tmp_path / f"{free_cores.PEER_PREFIX}999999"
    other.touch()
    os.utime(other, (now[0] - 0.5, now[0] - 0.5))
    assert peers.others_active()
    os.utime(other, (now[0] - 5, now[0] - 5))
    assert not peers.others_active(), "a heartbeat older than PEER_SECONDS: not running"
    os.utime(other, (now[0] - 2 * free_cores.STALE_SECONDS,) * 2)
    assert not peers.others_active() and not other.exists(), "a stale file is removed"
    own.unlink()  # removed by someone else: the next heartbeat makes it again
    peers.beat()
    assert own.exists()
    peers._remove()
    assert not own.exists()


def test_no_busy_cpu_to_share_while_another_graphflow_process_runs(monkeypatch):
    monkeypatch.setenv(free_cores.ENV_SWITCH, "1")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs in the affinity mask")
    a, b = cpus[:2]

    class Peers:
        active = True
        beats = 0

        def beat(self):
            self.beats += 1

        def others_active(self):
            return self.active
    fake, peers = PerCpuMachine(cpus), Peers()
    sensor = free_cores.FreeCores(read_stat=fake.stat, own_seconds=fake.own,
                                  clock=lambda: fake.now, thread_ticks=fake.thread_ticks,
                                  peers=peers)
    sensor.count()
    for _ in range(2):
        fake.advance(0.3, others_on={b: 1.0}, own_on={1: (a, 1.0)})
        assert sensor.count() == len(cpus) - 1 and sensor.busy_cpu is None
    peers.active = False
    fake.advance(0.3, others_on={b: 1.0}, own_on={1: (a, 1.0)})
    assert sensor.count() == len(cpus) - 1 and sensor.busy_cpu == b
    assert peers.beats == 4, "a heartbeat at every refresh"
