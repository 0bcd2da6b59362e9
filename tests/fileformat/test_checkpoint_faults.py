"""`Saver.save` on a full disk and after killed saves: a failed save leaves no file behind and the
saver's kept list as it was; the next save removes what killed saves left (docs/security.md)."""

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

import graphflow as tf
from graphflow.fileformat import checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Fills a small tmpfs so that a second checkpoint's data fits and then, one 4 KiB page more at a
# time, its index, its .meta and the state file do not; prints what each failed save left.
_FULL_DISK = textwrap.dedent("""
    import errno, json, os, sys
    import graphflow as tf
    d = sys.argv[1]
    v = tf.Variable(tf.zeros([30000]))  # 120,000 bytes of data
    saver = tf.train.Saver(max_to_keep=2)
    page = os.statvfs(d).f_frsize
    def free():
        st = os.statvfs(d)
        return st.f_bavail * st.f_frsize
    report = {"failures": []}
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, os.path.join(d, "m"), global_step=1)
        before, state = sorted(os.listdir(d)), open(os.path.join(d, "checkpoint")).read()
        for extra in range(40):
            filler = os.path.join(d, "filler")
            if os.path.exists(filler):
                os.remove(filler)
            with open(filler, "wb") as f:
                f.write(bytes(free() - (-(-120000 // page) + extra) * page))
            available = free()
            try:
                saver.save(sess, os.path.join(d, "m"), global_step=2)
            except OSError as exc:
                report["failures"].append({
                    "errno": errno.errorcode[exc.errno],
                    "left": sorted(set(os.listdir(d)) - set(before) - {"filler"}),
                    "freed": free() == available,
                    "state_kept": open(os.path.join(d, "checkpoint")).read() == state,
                    "kept": [os.path.basename(p) for p in saver.last_checkpoints]})
                continue
            report["saved"] = sorted(set(os.listdir(d)) - {"filler"})
            break
    print(json.dumps(report))
""")


def _can_mount_tmpfs():
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(sys.platform != "linux" or not _can_mount_tmpfs(),
                    reason="needs a private mount namespace (unshare -rm) to mount a small tmpfs")
def test_saves_that_fill_a_real_tmpfs_leave_nothing_behind(tmp_path):
    script = tmp_path / "full_disk.py"
    script.write_text(_FULL_DISK)
    mount = tmp_path / "mnt"
    mount.mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=1m tmpfs "{mount}" && '
                                       f'exec "{sys.executable}" "{script}" "{mount}"'],
        capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    failures = report["failures"]
    assert len(failures) >= 3  # the index, the .meta, the state file each did not fit
    for failure in failures:
        assert failure == {"errno": "ENOSPC", "left": [], "freed": True, "state_kept": True,
                           "kept": ["m-1"]}
    assert report["saved"] == ["checkpoint", "m-1.data-00000-of-00001", "m-1.index", "m-1.meta",
                               "m-2.data-00000-of-00001", "m-2.index", "m-2.meta"]


def _model():
    v = tf.Variable(tf.zeros([1000]), name="v")
    return v


def _fail_fsync(monkeypatch, at):
    """Make the `at`-th os.fsync of a file raise ENOSPC (a full disk found when flushing)."""
    real, calls = os.fsync, [0]

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return real(fd)
        calls[0] += 1
        if calls[0] == at:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)
    monkeypatch.setattr(os, "fsync", fsync)


def test_a_save_failing_at_each_file_leaves_no_file_and_the_kept_list(tmp_path, monkeypatch):
    _model()
    saver = tf.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, prefix, global_step=1)
        saver.save(sess, prefix, global_step=2)
        before = sorted(os.listdir(tmp_path))
        state = (tmp_path / "checkpoint").read_bytes()
        failures = 0
        for at in range(1, 20):  # the data file, the index, the .meta, the state file
            with monkeypatch.context() as patch:
                _fail_fsync(patch, at)
                try:
                    saver.save(sess, prefix, global_step=3)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    failures += 1
                    assert sorted(os.listdir(tmp_path)) == before, at
                    assert (tmp_path / "checkpoint").read_bytes() == state
                    assert saver.last_checkpoints == [f"{prefix}-1", f"{prefix}-2"]
                    continue
            break
        assert failures >= 4
        # the kept list went on as if the failed saves never happened: m-1 goes now
        assert saver.last_checkpoints == [f"{prefix}-2", f"{prefix}-3"]
        assert sorted(os.listdir(tmp_path)) == [
            "checkpoint", "m-2.data-00000-of-00001", "m-2.index", "m-2.meta",
            "m-3.data-00000-of-00001", "m-3.index", "m-3.meta"]


def test_a_failed_state_file_write_does_not_leak_the_checkpoint_it_expired(tmp_path,
                                                                          monkeypatch):
    _model()
    saver = tf.train.Saver(max_to_keep=1)
    prefix = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, prefix, global_step=1, write_meta_graph=False)
        with monkeypatch.context() as patch:
            def full(*args, **kwargs):
                raise OSError(errno.ENOSPC, "No space left on device")
            patch.setattr(checkpoint.checkpoint_files, "write_state", full)
            with pytest.raises(OSError):
                saver.save(sess, prefix, global_step=2, write_meta_graph=False)
        saver.save(sess, prefix, global_step=3, write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-3.data-00000-of-00001", "m-3.index"]


def test_files_a_failed_save_could_not_remove_go_at_the_next_save(tmp_path, monkeypatch):
    _model()
    saver = tf.train.Saver()
    prefix = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with monkeypatch.context() as patch:
            real_remove, state_failed = os.remove, []

            def remove(path, *args, **kwargs):
                if state_failed and os.fspath(path).endswith(".index"):
                    raise PermissionError(errno.EACCES, "Permission denied", path)
                return real_remove(path, *args, **kwargs)

            def full(*args, **kwargs):
                state_failed.append(True)
                raise OSError(errno.ENOSPC, "No space left on device")
            patch.setattr(os, "remove", remove)
            patch.setattr(checkpoint.checkpoint_files, "write_state", full)
            with pytest.raises(OSError):
                saver.save(sess, prefix, global_step=1)
        assert os.listdir(tmp_path) == ["m-1.index"]  # could not be removed then
        tf.train.Saver().save(sess, prefix, global_step=2)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-2.data-00000-of-00001",
                                            "m-2.index", "m-2.meta"]


def test_temp_files_of_killed_saves_of_bundles_go_and_checkpoints_stay(tmp_path):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # a process that is gone
    for name in (f".m-5.data-00000-of-00001.{pid}-0123456789ab.tmp",
                 f".m-5.index.{pid}-0123456789ab.tmp", f".m-5.meta.{pid}-0123456789ab.tmp",
                 f".m-5.data-00000-of-00001.{os.getpid()}-0123456789ab.tmp"):  # alive: stays
        (tmp_path / name).write_bytes(b"half")
    _model()
    prefix = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # a checkpoint no state file names (write_state=False), another Saver's, an older format
        tf.train.Saver().save(sess, prefix, global_step=1, write_state=False)
        tf.train.Saver().save(sess, str(tmp_path / "other"), latest_filename="other_state")
        (tmp_path / "old-0.npz").write_bytes(b"kept as it is")
        tf.train.Saver(max_to_keep=1).save(sess, prefix, global_step=6)
    assert sorted(os.listdir(tmp_path)) == sorted([
        f".m-5.data-00000-of-00001.{os.getpid()}-0123456789ab.tmp", "checkpoint",
        "m-1.data-00000-of-00001", "m-1.index", "m-1.meta",
        "m-6.data-00000-of-00001", "m-6.index", "m-6.meta", "old-0.npz",
        "other.data-00000-of-00001", "other.index", "other.meta", "other_state"])
