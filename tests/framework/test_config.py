"""graphflow.framework.config: TF1's ConfigProto/GPUOptions and where a session's intra-op thread count
comes from (config, process default, environment variable, core count)."""

import platform
import subprocess
import sys

import pytest

import graphflow as tf
from graphflow.framework import config


@pytest.fixture(autouse=True)
def no_process_default(monkeypatch):
    monkeypatch.delenv(config.ENV_INTRA_OP_THREADS, raising=False)
    config.set_intra_op_parallelism_threads(0)
    yield
    config.set_intra_op_parallelism_threads(0)


def test_config_proto_fields_as_in_tf1():
    c = tf.ConfigProto(intra_op_parallelism_threads=3, allow_soft_placement=True)
    assert c.intra_op_parallelism_threads == 3 and c.inter_op_parallelism_threads == 0
    assert c.allow_soft_placement and not c.log_device_placement
    c.gpu_options.allow_growth = True                   # the usual TF1 idiom
    assert c.gpu_options.allow_growth and not tf.ConfigProto().gpu_options.allow_growth
    c2 = tf.ConfigProto(gpu_options=tf.GPUOptions(allow_growth=True), allow_soft_placement=True,
                        intra_op_parallelism_threads=3)
    assert c == c2 and "intra_op_parallelism_threads=3" in repr(c)
    with pytest.raises(ValueError, match='no "intra_op_threads" field'):
        tf.ConfigProto(intra_op_threads=2)
    with pytest.raises(AttributeError, match="intra_threads"):
        c.intra_threads = 2
    with pytest.raises(ValueError, match=">= 0"):
        tf.ConfigProto(intra_op_parallelism_threads=-1)
    with pytest.raises(TypeError, match="must be an int"):
        c.inter_op_parallelism_threads = 2.5
    with pytest.raises(TypeError, match="GPUOptions"):
        c.gpu_options = {"allow_growth": True}


def test_default_thread_count_sources_in_order(monkeypatch):
    monkeypatch.setattr(config, "available_cores", lambda: 16)
    assert config.default_intra_op_threads() == config.MAX_DEFAULT_INTRA_OP_THREADS == 4
    monkeypatch.setattr(config, "available_cores", lambda: 2)
    assert config.default_intra_op_threads() == 2
    monkeypatch.setenv(config.ENV_INTRA_OP_THREADS, "6")
    assert config.default_intra_op_threads() == 6
    monkeypatch.setenv(config.ENV_INTRA_OP_THREADS, "0")  # 0: the default
    assert config.default_intra_op_threads() == 2
    tf.config.threading.set_intra_op_parallelism_threads(3)
    assert config.default_intra_op_threads() == 3
    assert tf.config.threading.get_intra_op_parallelism_threads() == 3
    config.set_intra_op_parallelism_threads(0)           # reset
    assert config.get_intra_op_parallelism_threads() == 0
    assert config.default_intra_op_threads() == 2
    monkeypatch.setenv(config.ENV_INTRA_OP_THREADS, "two")
    with pytest.raises(ValueError, match="GRAPHFLOW_INTRA_OP_THREADS='two'"):
        config.default_intra_op_threads()
    with pytest.raises(ValueError):
        config.set_intra_op_parallelism_threads(-2)


def test_session_thread_count_is_fixed_when_the_session_is_created(monkeypatch):
    monkeypatch.setattr(config, "available_cores", lambda: 2)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=5)) as sess:
        assert sess._state.intra_op_threads == 5
    monkeypatch.setenv(config.ENV_INTRA_OP_THREADS, "3")
    sess = tf.Session()
    unset = tf.Session(config=tf.ConfigProto())          # 0: the process default
    monkeypatch.setenv(config.ENV_INTRA_OP_THREADS, "1")
    assert sess._state.intra_op_threads == unset._state.intra_op_threads == 3
    assert tf.Session()._state.intra_op_threads == 1
    with pytest.raises(TypeError, match="ConfigProto"):
        tf.Session(config={"intra_op_parallelism_threads": 2})


def test_inter_op_thread_count_is_recorded_as_tf_records_it():
    try:
        tf.config.threading.set_inter_op_parallelism_threads(2)  # as TF1 programs call it
        assert tf.config.threading.get_inter_op_parallelism_threads() == 2
        with pytest.raises(ValueError, match=">= 0"):
            tf.config.threading.set_inter_op_parallelism_threads(-1)
    finally:
        tf.config.threading.set_inter_op_parallelism_threads(0)
    assert tf.config.threading.get_inter_op_parallelism_threads() == 0


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc")
def test_keep_freed_memory_sets_mallocs_thresholds_only_when_called():
    """In a fresh process: a 40 MB block is mmapped (glibc's dynamic threshold stops at 32 MB)
    after `import graphflow`, and served from the heap once `tf.config.keep_freed_memory()`
    raised the threshold to 128 MB."""
    code = (
        "import ctypes\n"
        "import graphflow as tf\n"
        "libc = ctypes.CDLL(None)\n"
        "class Info(ctypes.Structure):\n"
        "    _fields_ = [(n, ctypes.c_int) for n in ('arena', 'ordblks', 'smblks', 'hblks',\n"
        "                'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
        "libc.mallinfo.restype = Info\n"
        "libc.malloc.restype = ctypes.c_void_p\n"
        "libc.malloc.argtypes = [ctypes.c_size_t]\n"
        "libc.free.argtypes = [ctypes.c_void_p]\n"
        "def mmapped():\n"
        "    before = libc.mallinfo().hblks\n"
        "    p = libc.malloc(40 << 20)\n"
        "    out = libc.mallinfo().hblks == before + 1\n"
        "    libc.free(p)\n"
        "    return out\n"
        "print(mmapped(), tf.config.keep_freed_memory(), mmapped(), tf.config.keep_freed_memory())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False", "True"]
