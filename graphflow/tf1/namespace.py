"""Public TF1 namespaces: `tf.nn`, `tf.layers`, `tf.train`, `tf.contrib.layers`, ... as module
objects that export exactly their API.

An implementation module (`graphflow/tf1/layers.py`) imports what it needs (numpy, op families);
users must not see those names. `PublicNamespace("tf.layers", ["graphflow.tf1.layers"])` is the module
object users reach: it resolves a name only when one of its source modules lists it in `__all__`
(or it was given as a member), and any other name raises
`AttributeError: graphflow does not implement tf.layers.X (see docs/compat.md)`.
Sources are imported when the namespace is made; `optional` names are imported on first use, so a
namespace may name a module that does not exist yet (`tf.contrib.rnn` over the RNN cells): asking
for one of those names then says which module is missing. `docs/compat.md` is generated from
these namespaces (graphflow/tools/compat_doc.py).
"""

import importlib
import sys
import types

COMPAT_DOC = "docs/compat.md"


class NotImplementedInGraphflow(AttributeError):
    """A TF1 name that graphflow does not provide (an AttributeError, so `hasattr` is False)."""


def not_implemented(qualified_name, hint=None):
    """The error for a TF1 attribute graphflow lacks: 'graphflow does not implement tf.X (see ...)'."""
    message = f"graphflow does not implement {qualified_name} (see {COMPAT_DOC})"
    if hint:
        message += f"; {hint}"
    return NotImplementedInGraphflow(message)


class PublicNamespace(types.ModuleType):
    """A module object exporting its sources' `__all__` names and its `members`, nothing else.

    path: the TF1 spelling ('tf.layers'); sources: module names whose `__all__` it exports;
    members: {name: value} added as is (sub-namespaces, aliases); optional: {name: module} for
    names that live in a module which may be absent (the error then names that module);
    hints: {name: text} appended to the 'does not implement' error of a known-absent name;
    any_hint: text appended to the error of every absent name."""

    def __init__(self, path, sources=(), members=None, doc=None, optional=None, hints=None,
                 any_hint=None):
        super().__init__("graphflow." + path.split(".", 1)[1] if "." in path else "graphflow",
                         doc)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_sources", tuple(sources))
        for source in self._sources:  # import now: a broken module fails at `import graphflow`
            importlib.import_module(source)
        object.__setattr__(self, "_members", dict(members or {}))
        object.__setattr__(self, "_optional", dict(optional or {}))
        object.__setattr__(self, "_hints", dict(hints or {}))
        object.__setattr__(self, "_any_hint", any_hint)
        for name, value in self._members.items():
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        for source in self._sources:
            module = importlib.import_module(source)
            if name in getattr(module, "__all__", ()):
                value = getattr(module, name)
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
        raise not_implemented(f"{self._path}.{name}", self._hints.get(name, self._any_hint))

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
            names.update(getattr(importlib.import_module(source), "__all__", ()))
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
           "COMPAT_DOC"]
