"""Public TF1 namespaces: `tf.nn`, `tf.layers`, `tf.train`, `tf.contrib.layers`, ... as module
objects that export exactly their API.

An implementation module (`graphflow/tf1/layers.py`) imports what it needs (numpy, op families);
users must not see those names. `PublicNamespace("tf.layers", ["graphflow.tf1.layers"])` is the module
object users reach: it resolves a name only when one of its source modules lists it in `__all__`
(or it was given as a member), and any other name raises
`AttributeError: graphflow does not implement tf.layers.X (see docs/compat.md)`, followed by the
closest names the namespace has ("Did you mean tf.layers.dense?"), or, for a TensorFlow 2 idiom
(`tf.function`, `tf.GradientTape`), by what to write instead (graphflow/tf1/tf2_idioms.py).
Nothing is imported when the namespace is made: a source module is imported on the first lookup
of a name it might hold (or by `dir()`/`__all__`), so `import graphflow` does not load tf.keras,
tf.estimator, tf.data, ... until a program touches them. A source may be spelled
`"module:NAMES"` to export the names listed in `module.NAMES` instead of its `__all__`; a member
may be a `lazy("module", "attr.path")` reference, resolved (and kept) on first use. `optional`
names live in a module that may not exist yet (`tf.contrib.rnn` over the RNN cells): asking for
one of those names then says which module is missing. `docs/compat.md` is generated from these
namespaces (graphflow/tools/compat_doc.py).
"""

import importlib
import sys
import types

from graphflow.framework.errors import NotImplementedInGraphflow
from graphflow.tf1 import tf2_idioms

COMPAT_DOC = "docs/compat.md"


def not_implemented(qualified_name, hint=None, candidates=None):
    """The error for a TF1 attribute graphflow lacks: 'graphflow does not implement tf.X (see ...)'
    then `hint`, then the closest of `candidates()` (the names the namespace has), computed when
    the message is shown. A TensorFlow 2 idiom's error says what to write instead."""
    idiom = tf2_idioms.advice(qualified_name)
    if idiom:
        return NotImplementedInGraphflow(f"graphflow does not implement {qualified_name}: {idiom} "
                                         f"(see {tf2_idioms.SECTION})")
    message = f"graphflow does not implement {qualified_name} (see {COMPAT_DOC})"
    if hint:
        message += f"; {hint}"
    parent, _, missing = qualified_name.rpartition(".")
    return NotImplementedInGraphflow(message, candidates, missing, parent + ".")


class Lazy:
    """A member resolved on first use: `getattr(import_module(module), attr)`, `attr` dotted."""

    __slots__ = ("module", "attr")

    def __init__(self, module, attr):
        self.module = module
        self.attr = attr

    def resolve(self):
        value = importlib.import_module(self.module)
        for part in self.attr.split("."):
            value = getattr(value, part)
        return value

    def __repr__(self):
        return f"lazy({self.module!r}, {self.attr!r})"


def lazy(module, attr):
    """A namespace member that is `module.attr` (a dotted path), imported on first use."""
    return Lazy(module, attr)


def _source_names(source):
    """The names a source exports: `module` -> its `__all__`; `module:NAMES` -> `module.NAMES`."""
    module_name, _, listing = source.partition(":")
    return getattr(importlib.import_module(module_name), listing or "__all__", ())


class PublicNamespace(types.ModuleType):
    """A module object exporting its sources' `__all__` names and its `members`, nothing else.

    path: the TF1 spelling ('tf.layers'); sources: module names whose `__all__` it exports
    ('module:NAMES': the names listed in `module.NAMES`), imported on first lookup;
    members: {name: value} added as is (sub-namespaces, aliases; a `lazy(...)` value is resolved
    on first use); optional: {name: module} for
    names that live in a module which may be absent (the error then names that module);
    hints: {name: text} appended to the 'does not implement' error of a known-absent name;
    any_hint: text appended to the error of every absent name."""

    def __init__(self, path, sources=(), members=None, doc=None, optional=None, hints=None,
                 any_hint=None):
        super().__init__("graphflow." + path.split(".", 1)[1] if "." in path else "graphflow",
                         doc)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_sources", tuple(sources))
        object.__setattr__(self, "_members", dict(members or {}))
        object.__setattr__(self, "_optional", dict(optional or {}))
        object.__setattr__(self, "_hints", dict(hints or {}))
        object.__setattr__(self, "_any_hint", any_hint)
        for name, value in self._members.items():
            if not isinstance(value, Lazy):
                object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        member = self._members.get(name)
        if isinstance(member, Lazy):
            value = member.resolve()
            object.__setattr__(self, name, value)  # later lookups are plain attribute reads
            return value
        for source in self._sources:
            if name in _source_names(source):
                value = getattr(importlib.import_module(source.partition(":")[0]), name)
                object.__setattr__(self, name, value)  # later lookups are plain attribute reads
                return value
        if name in self._optional:
            module_name = self._optional[name]
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise NotImplementedInGraphflow(
                    f"{self._path}.{name} comes from {module_name}, which this graphflow does not "
                    f"have ({exc}); see {COMPAT_DOC}") from None
            if hasattr(module, name):
                value = getattr(module, name)
                object.__setattr__(self, name, value)
                return value
            raise NotImplementedInGraphflow(f"{self._path}.{name}: {module_name} has no '{name}' "
                                            f"(see {COMPAT_DOC})")
        raise not_implemented(f"{self._path}.{name}", self._hints.get(name, self._any_hint),
                              self.public_names)

    def __setattr__(self, name, value):
        """Adding a name by assignment makes it public (other modules may extend a namespace)."""
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            self._members[name] = value

    def __dir__(self):
        return sorted(self.public_names())

    @property
    def __all__(self):
        return sorted(self.public_names())

    def public_names(self):
        """Every name this namespace resolves now (optional names only when their module imports)."""
        names = set(self._members)
        for source in self._sources:
            names.update(_source_names(source))
        for name, module_name in self._optional.items():
            try:
                if hasattr(importlib.import_module(module_name), name):
                    names.add(name)
            except ImportError:
                pass
        return names

    def __repr__(self):
        return f"<graphflow namespace {self._path}>"


def register_importable(namespace, module_name):
    """Make `from <module_name> import x` work for a namespace (TF1 programs type
    `from tensorflow.contrib import rnn`, `from tensorflow.contrib.layers import flatten`)."""
    sys.modules[module_name] = namespace
    return namespace


__all__ = ["PublicNamespace", "NotImplementedInGraphflow", "not_implemented", "register_importable",
           "lazy", "Lazy", "COMPAT_DOC"]
