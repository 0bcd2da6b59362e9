"""`tf.app`: `tf.app.run(main)` parses the command-line flags and calls `main(argv)`, exiting with
its return value, as TF1's does; `tf.app.flags` is `tf.flags`."""

import sys

from graphflow.tf1 import flags as _flags_module


def run(main=None, argv=None):
    """Parse flags from `argv` (default `sys.argv`), then `sys.exit(main(remaining_argv))`;
    `main` defaults to the caller module's `main`. `--help` prints the flags and exits."""
    args = sys.argv if argv is None else list(argv)
    if "--help" in args[1:] or "-h" in args[1:] or "--helpfull" in args[1:]:
        print(f"{args[0] if args else 'program'}:\n{_flags_module.FLAGS.help_text()}")
        sys.exit(0)
    remaining = _flags_module.FLAGS(args, known_only=True)
    if main is None:
        main = sys.modules["__main__"].main
    sys.exit(main(remaining))


__all__ = ["run"]
