"""TensorFlow's SavedModel directory (TF1 form): written from graphflow graphs, and its files read
as hostile input.

    export_dir/saved_model.pb          a SavedModel message: one MetaGraphDef per tag set
                                       (saved_model.pbtxt when written as text)
    export_dir/variables/variables.index, variables.data-00000-of-00001   a V2 checkpoint
    export_dir/assets/...              files the graph names through `asset_file_def`

`SavedModelWriter` collects meta graphs (`add`) and writes the directory in one step (`save`):
everything goes into a temporary directory beside `export_dir`, which is renamed into place, so
`export_dir` either does not exist or is complete; like TensorFlow, an existing `export_dir` is
refused. Reading: `saved_model.pb` is size-checked before it is read and parsed by protobuf
(faults are GraphFormatError naming the file); an asset's file name must stay inside `assets/`
(`asset_path`: no absolute paths, no `..`, no symlink leading out). Loading a directory into a
graph is `graphflow.interop.tensorflow.saved_model`.
"""

import os
import shutil

from graphflow.fileformat import tf_meta_graph as mg
from graphflow.fileformat import tf_protos as pb
from graphflow.framework.errors import GraphFormatError

SCHEMA_VERSION = 1
PB_FILE, PBTXT_FILE = "saved_model.pb", "saved_model.pbtxt"
VARIABLES_DIR, VARIABLES_PREFIX, ASSETS_DIR = "variables", "variables", "assets"
MAIN_OP_KEY, LEGACY_INIT_OP_KEY = "saved_model_main_op", "legacy_init_op"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
ASSET_FILEPATHS = "asset_filepaths"


def is_saved_model_dir(path):
    return os.path.isfile(os.path.join(path, PB_FILE)) or \
        os.path.isfile(os.path.join(path, PBTXT_FILE))




# ------------------------------------------------------------------------------------ writing
class SavedModelWriter:
    """Meta graphs and variable values gathered for one SavedModel directory."""

    def __init__(self, export_dir):
        self.export_dir = os.fspath(export_dir)
        if os.path.exists(self.export_dir):
            raise AssertionError(f"Export directory already exists, and isn't empty. Please "
                                 f"choose a different export directory, or delete all the "
                                 f"contents of the specified directory: {self.export_dir}")
        self._metas = []
        self._values = None   # {checkpoint key: array}
        self._saver = None    # [(checkpoint key, variable op)]
        self._assets = {}     # {file name in assets/: source path}

    @property
    def has_variables(self):
        return self._values is not None

    def set_variables(self, session, saver_pairs):
        """Snapshot the values of [(checkpoint key, variable op)] from `session`."""
        values = session.variable_values()
        missing = [k for k, op in saver_pairs if op.attrs["shared_name"] not in values]
        if missing:
            raise ValueError(f"SavedModel: variables {missing} are not initialized in the "
                             "session; run their initializers first")
        self._values = {k: values[op.attrs["shared_name"]].copy() for k, op in saver_pairs}
        self._saver = list(saver_pairs)

    def _asset_defs(self, assets):
        """AssetFileDefs of [(string tensor, source path)]; files are copied at `save`."""
        defs = []
        for tensor, source in assets:
            source = os.fspath(source.decode() if isinstance(source, bytes) else source)
            if not os.path.isfile(source):
                raise ValueError(f"SavedModel asset '{source}' (tensor {tensor.name}) is not a "
                                 "file")
            name = os.path.basename(source)
            if self._assets.get(name, source) != source:
                raise ValueError(f"SavedModel: two assets are named '{name}'")
            self._assets[name] = source
            info = pb.TensorInfo(name=tensor.name)
            defs.append(pb.AssetFileDef(tensor_info=info, filename=name))
        return defs

    def add(self, graph, tags, signature_def_map=None, assets=(), main_op=None,
            clear_devices=False, warn=None):
        tags = [tags] if isinstance(tags, str) else list(tags)
        if any(sorted(tags) == sorted(m.meta_info_def.tags) for m in self._metas):
            raise AssertionError(f"A meta graph with tags {tags} was already added")
        assets = list(assets)
        asset_defs = self._asset_defs(assets)
        meta = mg.meta_graph_def(graph, saver=self._saver, clear_devices=clear_devices,
                                 tags=tags, signature_def_map=signature_def_map,
                                 asset_file_defs=asset_defs, warn=warn)
        if main_op is not None:
            meta.collection_def[MAIN_OP_KEY].node_list.value[:] = [main_op.name]
        if assets:
            meta.collection_def[ASSET_FILEPATHS].node_list.value[:] = [t.name for t, _ in assets]
        self._metas.append(meta)

    def save(self, as_text=False):
        from graphflow.fileformat.tf_bundle import write_bundle
        if os.path.exists(self.export_dir):
            raise AssertionError(f"Export directory already exists: {self.export_dir}")
        parent = os.path.dirname(os.path.abspath(self.export_dir))
        os.makedirs(parent, exist_ok=True)
        tmp = os.path.join(parent, f".{os.path.basename(self.export_dir)}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(os.path.join(tmp, VARIABLES_DIR))
        try:
            if self._values:
                write_bundle(os.path.join(tmp, VARIABLES_DIR, VARIABLES_PREFIX), self._values)
            if self._assets:
                os.makedirs(os.path.join(tmp, ASSETS_DIR))
                for name, source in self._assets.items():
                    shutil.copyfile(source, os.path.join(tmp, ASSETS_DIR, name))
            proto = pb.SavedModel(saved_model_schema_version=SCHEMA_VERSION,
                                  meta_graphs=self._metas)
            name = PBTXT_FILE if as_text else PB_FILE
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(mg.serialize(proto, as_text))
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, self.export_dir)  # fails if export_dir appeared meanwhile
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self.export_dir.encode()


# ------------------------------------------------------------------------------------ reading
def read_saved_model(export_dir, max_bytes=mg.MAX_META_GRAPH_BYTES):
    """The SavedModel message of `export_dir` (saved_model.pb, else saved_model.pbtxt)."""
    export_dir = os.fspath(export_dir)
    for name in (PB_FILE, PBTXT_FILE):
        path = os.path.join(export_dir, name)
        if os.path.exists(path):
            what = f"SavedModel file '{path}'"
            return mg.parse_message(pb.SavedModel, mg.read_limited(path, what, max_bytes), what)
    raise OSError(f"SavedModel file does not exist at: {export_dir}/{{{PBTXT_FILE}|{PB_FILE}}}")


def find_meta_graph(saved_model, tags, export_dir):
    tags = [tags] if isinstance(tags, str) else list(tags)
    for meta in saved_model.meta_graphs:
        if set(meta.meta_info_def.tags) == set(tags):
            return meta
    available = [list(m.meta_info_def.tags) for m in saved_model.meta_graphs]
    raise RuntimeError(f"MetaGraphDef associated with tags {tags} could not be found in "
                       f"SavedModel '{export_dir}'. Available tag-sets: {available}")


def asset_path(export_dir, filename, what):
    """The path of asset `filename` inside `export_dir/assets`, refusing names that lead out."""
    parts = filename.replace("\\", "/").split("/")
    if not filename or "\0" in filename or os.path.isabs(filename) or filename.startswith(
            ("/", "\\")) or ".." in parts or (len(filename) > 1 and filename[1] == ":"):
        raise GraphFormatError(f"{what}: asset file name {filename!r} is not a plain name "
                               f"inside {ASSETS_DIR}/")
    root = os.path.realpath(export_dir)
    assets = os.path.realpath(os.path.join(export_dir, ASSETS_DIR))
    path = os.path.realpath(os.path.join(export_dir, ASSETS_DIR, filename))
    for inner, outer in ((assets, root), (path, assets)):
        if os.path.commonpath([inner, outer]) != outer:
            raise GraphFormatError(f"{what}: asset {filename!r} leads out of the SavedModel "
                                   "directory (a symbolic link)")
    return path
