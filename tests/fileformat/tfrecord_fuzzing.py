"""Mutations of valid TFRecord files (plain, GZIP, ZLIB) for `test_fuzz_tfrecord.py`.

`seed_records(rng)` makes records of assorted sizes; `mutants(records, compression, rng)` yields
(kind, bytes) variations of the file holding them: byte flips and truncations of the file as
stored (compressed bytes for GZIP/ZLIB), record headers rewritten to declare lengths up to 2**64-1
with a valid CRC, CRCs broken, garbage appended, and small compressed streams declaring a huge
record. `outcome(path, compression)` reads every record and says what happened: "read",
"rejected" (DataLossError), or the unexpected exception or bound exceeded.
"""

import struct
import zlib

from graphflow.fileformat import tfrecord
from graphflow.framework.errors import DataLossError
from tests.tooling import Bounds

_WBITS = {"": None, "ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}
HUGE = [2**64 - 1, 2**63, 2**40, 2**31 + 1, 2**31, 2**30, 5 << 20, 1 << 20, 70_000, 17]


def seed_records(rng):
    return [b"", b"a", rng.bytes(100), bytes(3000), rng.bytes(40_000), b"hello" * 2000]


def compress(raw, compression):
    if not compression:
        return raw
    c = zlib.compressobj(6, zlib.DEFLATED, _WBITS[compression])
    return c.compress(raw) + c.flush()


def _header(length):
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", tfrecord.masked_crc32c(head))


def _offsets(records):
    out, at = [], 0
    for r in records:
        out.append(at)
        at += len(r) + 16
    return out


def mutants(records, compression, rng, byte_flips=30, truncations=12):
    """(kind, file bytes) mutants of the file holding `records`."""
    raw = b"".join(tfrecord.encode_record(r) for r in records)
    stored = compress(raw, compression)
    for _ in range(byte_flips):
        flipped = bytearray(stored)
        for pos in rng.integers(0, len(stored), int(rng.integers(1, 6))):
            flipped[pos] ^= int(rng.integers(1, 256))
        yield "byte flip (stored)", bytes(flipped)
    for cut in rng.integers(0, len(stored), truncations):
        yield "truncated (stored)", stored[:cut]
    offsets = _offsets(records)
    for _ in range(4):  # edits of the records, then compressed
        at = offsets[int(rng.integers(0, len(offsets)))]
        edited = bytearray(raw)
        edited[at:at + 12] = _header(HUGE[int(rng.integers(0, len(HUGE)))])
        yield "huge length, valid CRC", compress(bytes(edited), compression)
        edited = bytearray(raw)
        edited[at + int(rng.integers(0, 12))] ^= 0x40
        yield "header bit", compress(bytes(edited), compression)
        edited = bytearray(raw)
        pos = int(rng.integers(0, len(raw)))
        edited[pos] ^= int(rng.integers(1, 256))
        yield "byte flip (records)", compress(bytes(edited), compression)
    yield "garbage appended", compress(raw + rng.bytes(int(rng.integers(1, 40))), compression)
    yield "cut inside a record", compress(raw[:int(rng.integers(1, len(raw)))], compression)
    if compression:
        declared = HUGE[int(rng.integers(0, len(HUGE)))]
        c = zlib.compressobj(9, zlib.DEFLATED, _WBITS[compression])
        body = c.compress(_header(declared)) + b"".join(
            c.compress(bytes(1 << 20)) for _ in range(int(rng.integers(1, 48))))
        yield "small stream, huge record", body + c.flush()


def outcome(path, compression, seconds=2.0, max_bytes=32 << 20):
    """'read' or 'rejected' for acceptable outcomes, else a description of what went wrong."""
    bounds = Bounds()
    try:
        for _ in tfrecord.read_records(path, compression):
            pass
        result = "read"
    except DataLossError:
        result = "rejected"
    except Exception as exc:  # anything else is a bug the fuzzer found
        result = f"{type(exc).__name__}: {exc}"
    finally:
        bounds.stop()
    return bounds.verdict(result, seconds, max_bytes)
