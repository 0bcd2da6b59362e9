"""The `graphflow` command against hostile files and paths: destinations that are its own input, a
device, a FIFO or a link to one; names holding terminal escapes; inputs that are FIFOs or devices,
lie in their headers or nest too deeply; a reader that closes the pipe early. Every such input is
one line on stderr and exit status 2, and no file is replaced that should not be."""

import io
import json
import os
import stat
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.tools import cli, cli_io, cli_text

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

ESC_TITLE = "\x1b]0;pwned\x07"
RLO = "\u202e"


def _cli(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "graphflow.tools.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def _one_line_error(result, command):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.startswith(f"graphflow {command}: error: "), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def model_path(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    total = tf.reduce_sum(x * 2.0, name="total")
    path = tmp_path / "model.gfz"
    tf.save(str(path), {"x": x}, {"total": total})
    return path


# ------------------------------------------------------------------------------ output paths
def test_an_output_onto_the_model_or_an_input_is_refused(model_path, tmp_path):
    original = model_path.read_bytes()
    link = tmp_path / "link.gfz"
    link.symlink_to(model_path)
    hard = tmp_path / "hard.gfz"
    os.link(model_path, hard)
    np.save(tmp_path / "x.npy", np.ones([2, 3], np.float32))
    feed = ["--input", f"x={tmp_path / 'x.npy'}"]
    for args in (["run", model_path, *feed, "--output", model_path],
                 ["run", model_path, *feed, "--output", link],
                 ["run", link, *feed, "--output", hard],
                 ["run", model_path, *feed, "--output", tmp_path / "x.npy"],
                 ["optimize", model_path, "-o", model_path],
                 ["optimize", model_path, "-o", hard],
                 ["inspect", model_path, "--dot", link],
                 ["profile", model_path, *feed, "--trace", model_path],
                 ["export-onnx", model_path, hard]):
        err = _one_line_error(_cli(*args), args[0])
        assert "refusing to overwrite it" in err
        assert model_path.read_bytes() == original and link.is_symlink()
    assert np.load(tmp_path / "x.npy").shape == (2, 3)
    err = _one_line_error(_cli("inspect", model_path, "--dot", tmp_path / "g", "--svg",
                               tmp_path / "g"), "inspect")
    assert "also the destination of --dot" in err


def test_outputs_onto_special_files_are_refused_and_left_as_they_are(model_path, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    to_fifo = tmp_path / "to_fifo.npz"
    to_fifo.symlink_to(fifo)
    to_stdout = tmp_path / "stdout.npz"
    to_stdout.symlink_to("/proc/self/fd/1")   # the command's stdout: a pipe here
    for args in (["run", model_path, "--input", "x=[[1, 2, 3]]", "--output", fifo],
                 ["run", model_path, "--input", "x=[[1, 2, 3]]", "--output", to_fifo],
                 ["run", model_path, "--input", "x=[[1, 2, 3]]", "--output", to_stdout],
                 ["inspect", model_path, "--dot", to_fifo],
                 ["inspect", model_path, "--svg", fifo],
                 ["profile", model_path, "--input", "x=[[1, 2, 3]]", "--trace", to_stdout],
                 ["optimize", model_path, "-o", to_fifo],
                 ["export-onnx", model_path, fifo]):
        err = _one_line_error(_cli(*args, timeout=30), args[0])
        assert "not a regular file; refusing to replace it" in err
    assert "is a FIFO" in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert to_fifo.is_symlink() and to_stdout.is_symlink()


def test_the_null_device_is_written_to_and_stays_a_device(model_path, tmp_path):
    """`--output /dev/null` (here through a link to it) discards the outputs, as TF tools do."""
    null = tmp_path / "null.npz"
    null.symlink_to(os.devnull)
    for args in (["run", model_path, "--input", "x=[[1, 2, 3]]", "--output", null],
                 ["inspect", model_path, "--brief", "--dot", null],
                 ["optimize", model_path, "-o", null]):
        result = _cli(*args)
        assert result.returncode == 0, result.stderr
    assert null.is_symlink() and stat.S_ISCHR(os.stat(null).st_mode)


def test_outputs_replace_regular_files_through_links(model_path, tmp_path):
    old = tmp_path / "old.npz"
    old.write_bytes(b"old")
    link = tmp_path / "link.npz"
    link.symlink_to(old)
    result = _cli("run", model_path, "--input", "x=[[1, 2, 3]]", "--output", link)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    with np.load(old) as saved:
        assert saved["total"] == 12


def test_destinations_inside_an_input_directory_or_through_dangling_links(tmp_path):
    saved = tmp_path / "export_dir"
    (saved / "variables").mkdir(parents=True)
    with pytest.raises(cli_io.CommandError, match="inside the input directory"):
        cli_io.check_outputs([("--output", str(saved / "variables" / "out.npz"))], [str(saved)])
    with pytest.raises(cli_io.CommandError, match="is a directory"):
        cli_io.check_outputs([("--output", str(saved))], [])
    (tmp_path / "dangling").symlink_to(tmp_path / "new.npz")   # a new file, where the link points
    checked = cli_io.check_outputs([("--output", str(tmp_path / "dangling")), ("--dot", None)],
                                   [str(saved)])
    assert checked == {"--output": cli_io.Output("--output", str(tmp_path / "dangling"),
                                                 os.path.realpath(tmp_path / "new.npz"))}
    assert cli_io.check_outputs([("-o", os.devnull)], [])["-o"].target is None


# ------------------------------------------------------------------------------ terminal escapes
@pytest.mark.parametrize("text, shown", [
    ("a\x1b]0;t\x07b", "a\\x1b]0;t\\x07b"), ("\x9b31m", "\\x9b31m"), ("x\ty\r", "x\\x09y\\x0d"),
    (f"abc{RLO}fed", "abc\\u202efed"), ("\u2066\u2069\u200e\u061c", "\\u2066\\u2069\\u200e\\u061c"),
    ("\x7f\x00\ud800", "\\x7f\\x00\\ud800"), ("caf\u00e9 \u03bb/\\", "caf\u00e9 \u03bb/\\")])
def test_printable_escapes_controls_and_bidi_overrides(text, shown):
    assert cli_text.printable(text) == shown
    assert cli_text.printable_lines(f"{text}\n{text}") == f"{shown}\n{shown}"
    assert cli_text.printable(f"{text}\n") == f"{shown}\\x0a"   # one name, one line


def _with_producer(path, producer):
    """The graph file at `path` rewritten with another producer text (any string is valid)."""
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    doc = json.loads(members["graph.json"])
    doc["producer"] = producer
    members["graph.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def test_text_from_a_file_reaches_the_terminal_escaped(tmp_path):
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.identity(x * 2.0, name="y")
    path = tmp_path / "escapes.gfz"
    tf.save(str(path), {f"in{ESC_TITLE}": x}, {f"out\x9b2J{RLO}": y})
    _with_producer(path, f"graphflow{ESC_TITLE}\n")
    for args in (["inspect", path], ["run", path, "--input", f"in{ESC_TITLE}=[1]"],
                 ["profile", path, "--input", f"in{ESC_TITLE}=[1]", "--runs", "1"],
                 ["inspect", path, "--brief", "--outputs", f"out\x9b2J{RLO}", "--dot",
                  tmp_path / "e.dot"]):
        result = _cli(*args)
        assert result.returncode == 0, result.stderr
        for c in ("\x1b", "\x07", "\x9b", RLO):
            assert c not in result.stdout, (args[0], c)
        if args[0] == "inspect":
            assert "(graphflow\\x1b]0;pwned\\x07\\x0a)" in result.stdout
            assert "  in\\x1b]0;pwned\\x07: float32 [?]  (x:0)" in result.stdout
            assert "  out\\x9b2J\\u202e: float32 [?]  (y:0)" in result.stdout
        if args[0] == "run":
            assert "out\\x9b2J\\u202e: float32 [1]" in result.stdout
        if "--dot" in args:  # the picture's caption, printed
            assert "escapes.gfz: out\\x9b2J\\u202e from in\\x1b]0;pwned\\x07 at inference" \
                in result.stdout
    err = _one_line_error(_cli("run", path, "--input", "nope=[1]"), "run")
    assert "\x1b" not in err and "in\\x1b]0;pwned\\x07" in err


# ------------------------------------------------------------------------------ hostile inputs
def test_fifos_and_devices_as_inputs_are_refused_at_once(model_path, tmp_path):
    os.mkfifo(tmp_path / "fifo.npy")
    fifo = tmp_path / "fifo.gfz"
    os.mkfifo(fifo)
    zero_gfz = tmp_path / "zero.gfz"
    zero_gfz.symlink_to("/dev/zero")
    zero_npy = tmp_path / "zero.npy"
    zero_npy.symlink_to("/dev/zero")
    for args in (["inspect", fifo], ["inspect", zero_gfz], ["run", zero_gfz],
                 ["run", model_path, "--input", f"x={tmp_path / 'fifo.npy'}"],
                 ["run", model_path, "--input", f"x={zero_npy}"],
                 ["profile", model_path, "--input", f"x={zero_npy}"]):
        err = _one_line_error(_cli(*args, timeout=30), args[0])
        assert "is not a regular file" in err


def test_a_npy_input_declaring_a_huge_shape_allocates_nothing(model_path, tmp_path):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 3), }"
    header += " " * (63 - len(header) % 64) + "\n"
    huge = tmp_path / "huge.npy"
    huge.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                     + header.encode("latin-1") + b"\0" * 48)
    err = _one_line_error(_cli("run", model_path, "--input", f"x={huge}"), "run")
    assert "(1099511627776, 3)" in err and "holds 48 bytes" in err
    (tmp_path / "text.npy").write_text("[1, 2, 3]")
    err = _one_line_error(_cli("run", model_path, "--input", f"x={tmp_path / 'text.npy'}"), "run")
    assert "not a .npy or .npz file" in err


def test_deeply_nested_or_odd_json_inputs_are_one_line_errors(model_path):
    deep = "[" * 50_000 + "]" * 50_000
    err = _one_line_error(_cli("run", model_path, "--input", f"x={deep}"), "run")
    assert "nested more than 32 deep" in err
    err = _one_line_error(_cli("run", model_path, "--input", f"x=[[{10 ** 30}, 1, 2]]"), "run")
    assert "not an array of numbers" in err
    err = _one_line_error(_cli("run", model_path, "--input", 'x=[["a", "b", "c"]]'), "run")
    assert "--input x: cannot feed a value of dtype <U1 to a tensor of dtype float32" in err


def test_a_truncated_onnx_file_is_one_line(tmp_path, capsys):
    """Whatever protobuf says of a damaged model, the command reports it in one line."""
    pytest.importorskip("onnx")
    from graphflow.interop import onnx as gf_onnx
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    gf_onnx.export({"y": tf.nn.relu(x)}, str(tmp_path / "whole.onnx"), inputs={"x": x})
    whole = (tmp_path / "whole.onnx").read_bytes()
    path = tmp_path / "cut.onnx"
    path.write_bytes(whole[:len(whole) // 2])
    assert cli.main(["inspect", str(path)], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphflow inspect: error: ") and err.count("\n") == 1
    assert "ONNX model" in err
    os.mkfifo(tmp_path / "fifo.onnx")
    assert cli.main(["run", str(tmp_path / "fifo.onnx")], out=io.StringIO()) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_a_bug_in_graphflow_keeps_its_traceback(model_path, monkeypatch):
    def broken(args, out):
        raise KeyError("an internal bug")
    monkeypatch.setattr(cli, "cmd_inspect", broken)
    with pytest.raises(KeyError, match="an internal bug"):
        cli.main(["inspect", str(model_path)], out=io.StringIO())


# ------------------------------------------------------------------------------ closed pipes
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(model_path):
    """`graphflow inspect m.gfz | head`: no error message, status 141 (as for SIGPIPE)."""
    proc = subprocess.Popen([sys.executable, "-m", "graphflow.tools.cli", "inspect", str(model_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader is gone before anything is written
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == cli.BROKEN_PIPE_STATUS == 141
    assert err == b""
