"""TensorFlow's op signatures, as data: `tf_op_signatures.json`, generated from TensorFlow's own
OpDefs by `tests/fixtures/tensorflow/make_op_signatures.py`.

The exporter reads them to write every attr TensorFlow requires (an attr without a default that a
NodeDef lacks makes TensorFlow's importer refuse the graph), to fill type attrs (`T`, `N`,
`Tidx`) from the tensors, and to name function-body outputs (`MatMul:product:0`); the importer
reads them to count a node's inputs and outputs per argument and to give missing attrs
TensorFlow's defaults. No TensorFlow is needed at run time.
"""

import dataclasses
import functools
import json
import pathlib

_FILE = pathlib.Path(__file__).with_name("tf_op_signatures.json")


@dataclasses.dataclass(frozen=True)
class Arg:
    """One input or output argument of a TensorFlow op."""
    name: str
    number_attr: object     # N*T: the attr counting its tensors, else None
    type_attr: object       # the attr naming its element type, else None
    type_list_attr: object  # [Tlist]: the attr listing its tensors' types, else None
    fixed_dtype: object     # its one dtype name ("float32", "resource") when no attr says it
    ref: bool

    @property
    def variadic(self):
        return self.number_attr is not None or self.type_list_attr is not None


@dataclasses.dataclass(frozen=True)
class Attr:
    name: str
    kind: str  # "type", "list(type)", "int", "list(int)", "string", "shape", "tensor", "func", ...
    default: object
    has_default: bool
    allowed: object
    minimum: object


@dataclasses.dataclass(frozen=True)
class Signature:
    op: str
    inputs: tuple
    outputs: tuple
    attrs: dict  # name -> Attr, in TensorFlow's order
    stateful: bool

    @property
    def required_attrs(self):
        return [a.name for a in self.attrs.values() if not a.has_default]


@functools.lru_cache(maxsize=1)
def _data():
    return json.loads(_FILE.read_text())


def tensorflow_version():
    """The TensorFlow version the signatures were taken from."""
    return _data()["tensorflow"]


def _args(items, attr_names):
    args = []
    for name, kind, ref in items:
        number, _, elem = kind.rpartition("*")
        if elem.startswith("["):
            args.append(Arg(name, None, None, elem[1:-1], None, ref))
        elif elem in attr_names:
            args.append(Arg(name, number or None, elem, None, None, ref))
        else:
            args.append(Arg(name, number or None, None, None, elem, ref))
    return tuple(args)


@functools.lru_cache(maxsize=None)
def signature(op_type):
    """The Signature of TensorFlow op `op_type`, or None when the table does not hold it."""
    record = _data()["ops"].get(op_type)
    if record is None:
        return None
    attrs = {a[0]: Attr(*a) for a in record["attrs"]}
    names = frozenset(attrs)
    return Signature(op_type, _args(record["in"], names), _args(record["out"], names), attrs,
                     record["stateful"])


def known_ops():
    return sorted(_data()["ops"])
