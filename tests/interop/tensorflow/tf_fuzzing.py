"""Mutations of TensorFlow's `saved_model.pb` and `.meta` files for the fuzz test
(test_fuzz_meta_graph.py), in the style of tests/fileformat/fuzzing.py.

`saved_model_mutants(data, rng)` / `meta_mutants(data, rng)` yield (kind, bytes): byte flips and
truncations of the file, and message-level edits: signature entries naming missing tensors or
holding no name, collection entries naming missing ops or holding bytes that are no VariableDef,
saver names that point nowhere, asset file names leaving the directory (`../../etc/passwd`,
absolute paths, a symlink out, made by the caller), tags changed, nodes dropped or renamed.
`outcome(fn)` runs one load and says what happened: "loaded", "rejected" (GraphFormatError, or
the TensorFlow-named errors a damaged but well-formed file gives: missing tags, a checkpoint
that does not fit the graph's variables), or the unexpected exception, which the test counts as a failure.
"""


from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat.io_policy import IOPolicyError
from graphflow.framework.errors import GraphFormatError, OpError
from tests.tooling import Bounds

ESCAPING_ASSETS = ["../../etc/passwd", "/etc/passwd", "a/../../x", "..", "", "C:\\\\x",
                   "..\\..\\x", "link_out.txt"]


def _byte_level(data, rng, flips, cuts):
    for _ in range(flips):
        flipped = bytearray(data)
        for pos in rng.integers(0, len(data), int(rng.integers(1, 8))):
            flipped[pos] ^= int(rng.integers(1, 256))
        yield "byte flip", bytes(flipped)
    for cut in rng.integers(0, len(data), cuts):
        yield "truncated", data[:cut]


def _meta_edits(meta, rng):
    """(kind, edited MetaGraphDef) of one MetaGraphDef."""
    def copy():
        m = pb.MetaGraphDef()
        m.CopyFrom(meta)
        return m
    for key in list(meta.signature_def):
        for side in ("inputs", "outputs"):
            for name in list(getattr(meta.signature_def[key], side)):
                m = copy()
                getattr(m.signature_def[key], side)[name].name = "nowhere:0"
                yield "signature names a missing tensor", m
                m = copy()
                getattr(m.signature_def[key], side)[name].coo_sparse.values_tensor_name = "x:0"
                yield "signature entry without a name", m
                m = copy()
                getattr(m.signature_def[key], side)[name].name = "x:99"
                yield "signature names a missing output", m
    for key in list(meta.collection_def):
        col = meta.collection_def[key]
        kind = col.WhichOneof("kind")
        m = copy()
        if kind == "node_list" and col.node_list.value:
            m.collection_def[key].node_list.value[0] = "missing_op"
            yield "collection names a missing op", m
        elif kind == "bytes_list" and col.bytes_list.value:
            m.collection_def[key].bytes_list.value[0] = b"\xff\xff\xff"
            yield "collection entry is no VariableDef", m
            m = copy()
            m.collection_def[key].bytes_list.value[0] = b"\n\x0bmissing_v:0"
            yield "VariableDef names a missing variable", m
            m = copy()
            m.collection_def[key].bytes_list.value[0] = b"\n\x03x:0"
            yield "VariableDef names a placeholder", m
        m = copy()
        m.collection_def[key].int64_list.value.extend([2**62, -1])
        yield "collection kind changed", m
    m = copy()
    m.saver_def.restore_op_name = "nowhere/restore_all"
    m.saver_def.filename_tensor_name = "x:0"
    yield "saver names elsewhere", m
    for asset in ESCAPING_ASSETS:
        m = copy()
        m.asset_file_def.add(filename=asset).tensor_info.name = "vocab_path:0"
        del m.asset_file_def[:-1]
        yield f"asset {asset!r}", m
    m = copy()
    m.asset_file_def.add(filename="vocab.txt").tensor_info.name = "x:0"
    yield "asset tensor is not a string", m
    nodes = list(meta.graph_def.node)
    for i in rng.integers(0, len(nodes), 12):
        m = copy()
        del m.graph_def.node[int(i)]
        yield "node dropped", m
        m = copy()
        m.graph_def.node[int(i)].name = m.graph_def.node[int(rng.integers(0, len(nodes)))].name
        yield "duplicate node name", m
        m = copy()
        m.graph_def.node[int(i)].input.append(nodes[int(rng.integers(0, len(nodes)))].name)
        yield "input added", m
        m = copy()
        for attr in list(m.graph_def.node[int(i)].attr):
            m.graph_def.node[int(i)].attr[attr].i = 2**40
        yield "attrs of the wrong kind", m


def saved_model_mutants(data, rng, flips=900, cuts=200):
    yield from _byte_level(data, rng, flips, cuts)
    saved = pb.SavedModel.FromString(data)
    for kind, meta in _meta_edits(saved.meta_graphs[0], rng):
        edited = pb.SavedModel()
        edited.CopyFrom(saved)
        edited.meta_graphs[0].CopyFrom(meta)
        yield kind, edited.SerializeToString()
    edited = pb.SavedModel()
    edited.CopyFrom(saved)
    edited.meta_graphs[0].meta_info_def.tags[:] = ["train"]
    yield "tags changed", edited.SerializeToString()
    edited.meta_graphs.add().CopyFrom(saved.meta_graphs[0])
    yield "two meta graphs", edited.SerializeToString()


def meta_mutants(data, rng, flips=900, cuts=200):
    yield from _byte_level(data, rng, flips, cuts)
    for kind, meta in _meta_edits(pb.MetaGraphDef.FromString(data), rng):
        yield kind, meta.SerializeToString()


def outcome(load, seconds=10.0, max_bytes=256 << 20):
    """'loaded' or 'rejected' for acceptable outcomes, else a description of what went wrong."""
    bounds = Bounds()
    try:
        load()
        result = "loaded"
    except (GraphFormatError, IOPolicyError):  # refusing ops that reach outside is a rejection
        result = "rejected"
    except RuntimeError as exc:  # TensorFlow's words for a tag set the file does not hold
        result = "rejected" if "could not be found in SavedModel" in str(exc) else \
            f"RuntimeError: {exc}"
    except OpError as exc:  # restoring a checkpoint that does not fit the (damaged) graph
        result = "rejected" if "heckpoint" in str(exc) else f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # anything else is a bug the fuzzer found
        result = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        bounds.stop()
    return bounds.verdict(result, seconds, max_bytes)
