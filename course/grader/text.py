"""Text that came from a student, made safe to show and to write.

Anything a student controls (a folder or file name, an exception's message, a sentence that
quotes their value) may hold what a file or a terminal cannot take as it is: a lone surrogate
(a file name that is not UTF-8, "\\udcff" in a message), a control character or a terminal
escape code, or, in a spreadsheet's cell, a formula. Every text written passes through here.

    clean(text)     one line of plain text, cut to a length: sentences and notes
    safe(text)      every character that does not print as itself written as an escape, so that
                    the text encodes as UTF-8 and two texts that differ stay different: names
    shown_path(p)   a path as bytes would read: a byte that is not UTF-8 as \\xff
    cell(value)     a CSV cell that a spreadsheet application shows as text, never runs
"""
import os
import re

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b[@-_]?")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SURROGATE = re.compile(r"[\ud800-\udfff]")
# What spreadsheet applications read as the start of a formula (OWASP's list): such a cell is
# prefixed with a quote, which they show as text.
FORMULA = ("=", "+", "-", "@")   # and a tab or carriage return, which cell() escapes


def escaped(character):
    return character.encode("unicode_escape", "backslashreplace").decode("ascii")


def without_surrogates(text):
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clean(text, limit=300):
    """One line of plain text: escape codes removed, control characters and runs of whitespace
    made single spaces, lone surrogates written as \\udcff, cut to `limit` characters."""
    text = CONTROL.sub(" ", ANSI.sub("", without_surrogates(str(text))))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def safe(text):
    """The text with every character that does not print as itself (a control character, any
    whitespace but a plain space, a lone surrogate, a backslash) written as an escape."""
    return "".join(c if c == " " or (c.isprintable() and not c.isspace() and c != "\\")
                   else "\\\\" if c == "\\" else escaped(c) for c in str(text))


def shown_path(path):
    """A path in a student's folder as the feedback and the gradebook show it: a byte of a name
    that is not UTF-8 as \\xff, a character that does not print as an escape."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else escaped(c) for c in text)


def cell(value):
    """A CSV cell: a number as it is; text with lone surrogates and control characters escaped,
    and quoted when a spreadsheet would take it for a formula."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = CONTROL.sub(lambda m: escaped(m.group()), without_surrogates(str(value)))
    return "'" + text if text.startswith(FORMULA) else text
