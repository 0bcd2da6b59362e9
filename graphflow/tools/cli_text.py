"""Text from files made safe to print: the `graphflow` command shows op, tensor, signature and
collection names, producers, paths and error messages that a hostile file chose.

`printable(s)` escapes every character that could drive a terminal or reorder what is shown:
the C0 controls (U+0000-U+001F, newline and tab included, so one name is one line), DEL (U+007F),
the C1 controls (U+0080-U+009F, among them the 8-bit CSI and OSC), the Unicode bidirectional
controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and lone surrogates (which no
terminal encoding can hold). A character below U+0100 is shown as `\\xNN` (ESC as `\\x1b`), any
other as `\\uNNNN`. Backslashes are left as they are: this is for display, not for parsing back.

`printable_lines(text)` does the same for a multi-line text the command builds itself (a table),
keeping its own line breaks. Every printer of the command applies one of the two where text that
came from a file meets the output (`viz.summary` escapes its table cells the same way).
"""

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")


def _escape(match):
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text):
    """`text` (any object, through str) with control, bidi-control and surrogate characters
    escaped: the result holds no character that a terminal would act on, and no line break."""
    return _UNSAFE.sub(_escape, str(text))


def printable_lines(text):
    """Each line of `text` made `printable`, joined again with newlines."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


__all__ = ["printable", "printable_lines"]
