"""`tf.gfile` (TF1 names) and `tf.io.gfile` (later names) on local files."""

import pytest

import graphflow as tf


def test_tf1_names(tmp_path):
    root = str(tmp_path / "a" / "b")
    assert not tf.gfile.Exists(root)
    tf.gfile.MakeDirs(root)
    tf.gfile.MakeDirs(root)  # already there: fine, as in TF
    assert tf.gfile.Exists(root) and tf.gfile.IsDirectory(root)
    with tf.gfile.GFile(root + "/x.txt", "w") as f:
        f.write("line 1\nline 2\n")
    with tf.gfile.Open(root + "/y.bin", "wb") as f:
        f.write(b"\x00\x01")
    tf.gfile.MkDir(root + "/sub")
    assert tf.gfile.ListDirectory(root) == ["sub", "x.txt", "y.bin"]
    assert tf.gfile.Glob(root + "/*.txt") == [root + "/x.txt"]
    with tf.gfile.GFile(root + "/x.txt") as f:
        assert list(f) == ["line 1\n", "line 2\n"] and f.size() == 14
    assert tf.gfile.FastGFile(root + "/y.bin", "rb").read() == b"\x00\x01"
    assert tf.gfile.Stat(root + "/y.bin").length == 2
    tf.gfile.Copy(root + "/y.bin", root + "/z.bin")
    with pytest.raises(FileExistsError):
        tf.gfile.Rename(root + "/z.bin", root + "/y.bin")
    tf.gfile.Rename(root + "/z.bin", root + "/y.bin", overwrite=True)
    walked = list(tf.gfile.Walk(str(tmp_path / "a")))
    assert walked[0] == (str(tmp_path / "a"), ["b"], [])
    tf.gfile.Remove(root + "/x.txt")
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert not tf.gfile.Exists(str(tmp_path / "a"))


def test_missing_files_raise_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such file"):
        tf.gfile.GFile(str(tmp_path / "nope"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.ListDirectory(str(tmp_path / "nope"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.Remove(str(tmp_path / "nope"))
    with pytest.raises(NotImplementedError, match="local files only"):
        tf.gfile.Exists("gs://bucket/x")


def test_io_gfile_names(tmp_path):
    d = str(tmp_path / "d")
    tf.io.gfile.makedirs(d)
    with tf.io.gfile.GFile(d + "/f", "w") as f:
        f.write("x")
    assert tf.io.gfile.exists(d + "/f") and tf.io.gfile.listdir(d) == ["f"]
    assert tf.io.gfile.glob(d + "/*") == [d + "/f"] and tf.io.gfile.isdir(d)
    tf.io.gfile.rmtree(d)
    assert not tf.io.gfile.exists(d)
    assert not hasattr(tf.io.gfile, "Exists") and not hasattr(tf.gfile, "exists")
