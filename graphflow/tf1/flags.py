"""`tf.flags` / `tf.app.flags`: TF1's command-line flags (`DEFINE_string`, `DEFINE_integer`,
`DEFINE_float`, `DEFINE_boolean`, `DEFINE_list`, `DEFINE_enum`, `FLAGS`).

Flags are parsed from `sys.argv` the first time a value is read (as TF1's flags wrapper does) or by
`tf.app.run`. Like TF1's `known_only` parsing, arguments that are not flags are left alone and handed
to `main`. Accepted forms: `--name=value`, `--name value`; booleans also `--name`, `--noname`,
`--name=false`.
"""

import sys as _sys

_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


class Error(ValueError):
    """A bad flag value or definition."""


class _Flag:
    __slots__ = ("name", "default", "help", "parse", "value", "is_bool", "present")

    def __init__(self, name, default, help, parse, is_bool=False):
        self.name = name
        self.help = help
        self.parse = parse
        self.is_bool = is_bool
        self.default = None if default is None else parse(default)
        self.value = self.default
        self.present = False


class FlagValues:
    """`tf.flags.FLAGS`: flag values as attributes; parsing `sys.argv` on first read."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, flag):
        if flag.name in self._flags:
            raise Error(f"flag --{flag.name} is defined twice")
        self._flags[flag.name] = flag

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(f"no flag named --{name} is defined (tf.flags.DEFINE_...)")
        if not self._parsed:
            self(_sys.argv)
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(f"no flag named --{name} is defined (tf.flags.DEFINE_...)")
        self._flags[name].value = value

    def __contains__(self, name):
        return name in self._flags

    def __call__(self, argv, known_only=True):
        """Parse `argv` (argv[0] is the program); returns argv with the flags removed."""
        rest = [argv[0]] if argv else []
        args = list(argv[1:])
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                rest.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, has_value, value = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.is_bool:
                    negated.value, negated.present = False, True
                    continue
            if flag is None:
                if not known_only:
                    raise Error(f"unknown command line flag '{name}'")
                rest.append(arg)
                continue
            if not has_value:
                if flag.is_bool:
                    flag.value, flag.present = True, True
                    continue
                if i >= len(args):
                    raise Error(f"flag --{name} needs a value")
                value = args[i]
                i += 1
            try:
                flag.value = flag.parse(value)
            except (ValueError, TypeError) as exc:
                raise Error(f"flag --{name}={value}: {exc}") from None
            flag.present = True
        object.__setattr__(self, "_parsed", True)
        return rest

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def flag_values_dict(self):
        if not self._parsed:
            self(_sys.argv)
        return {name: flag.value for name, flag in self._flags.items()}

    def reset(self):
        """Forget every definition (tests define the same flags again)."""
        self._flags.clear()
        object.__setattr__(self, "_parsed", False)

    def help_text(self):
        lines = []
        for name, flag in sorted(self._flags.items()):
            lines.append(f"  --{name}: {flag.help}\n    (default: {flag.default!r})")
        return "\n".join(lines)

    def __dir__(self):
        return sorted(self._flags)


FLAGS = FlagValues()


def _bool(value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"expected true/false, got {value!r}")


def _list(value):
    if isinstance(value, (list, tuple)):
        return list(value)
    return [v.strip() for v in str(value).split(",") if v.strip()]


def DEFINE_string(name, default, help, flag_values=FLAGS, **kwargs):
    flag_values._define(_Flag(name, default, help, str))


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS,
                   **kwargs):
    def parse(value):
        number = int(value)
        if (lower_bound is not None and number < lower_bound) or \
                (upper_bound is not None and number > upper_bound):
            raise ValueError(f"{number} is outside [{lower_bound}, {upper_bound}]")
        return number
    flag_values._define(_Flag(name, default, help, parse))


def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS,
                 **kwargs):
    def parse(value):
        number = float(value)
        if (lower_bound is not None and number < lower_bound) or \
                (upper_bound is not None and number > upper_bound):
            raise ValueError(f"{number} is outside [{lower_bound}, {upper_bound}]")
        return number
    flag_values._define(_Flag(name, default, help, parse))


def DEFINE_boolean(name, default, help, flag_values=FLAGS, **kwargs):
    flag_values._define(_Flag(name, default, help, _bool, is_bool=True))


def DEFINE_list(name, default, help, flag_values=FLAGS, **kwargs):
    flag_values._define(_Flag(name, default, help, _list))


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS, **kwargs):
    def parse(value):
        if value not in enum_values:
            raise ValueError(f"must be one of {list(enum_values)}, got {value!r}")
        return value
    flag_values._define(_Flag(name, default, help, parse))


DEFINE_bool = DEFINE_boolean

__all__ = ["FLAGS", "FlagValues", "Error", "DEFINE_string", "DEFINE_integer", "DEFINE_float",
           "DEFINE_boolean", "DEFINE_bool", "DEFINE_list", "DEFINE_enum"]
