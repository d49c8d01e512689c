"""Text a student controls, made inert for every place vecgrade shows it: one line, no terminal control.

A student id is read from an inbound folder's name, and file and folder names come
from the submission; all of them can hold a newline (a forged log line such as
``student=<victim> ... outcome=graded 16/16``), an escape sequence (``ESC[2K`` erases
the teacher's line, ``ESC]0;...BEL`` sets the terminal's title), a carriage return, a
Unicode line separator or a bidirectional override. ``inert`` writes each such
character as visible text (``\\n``, ``\\x1b``, ``\\u202e``), so what it returns is one
line that a terminal, the journal, a spreadsheet or a browser shows as the characters
it holds. Everything else (letters of any script, ``+``, spaces, backslashes) is left
as it is: an honest name reads the same. Undecodable bytes of a file name (Python's
surrogate escapes) become ``\\udcNN``, never an error when written out.

Every log line, ``vecgrade status`` line, feedback page, HTML banner and CSV cell that
shows a student id, a file or folder name, or a message built from them goes through
``inert``; ``graders.model.csvsafe`` adds the spreadsheet's formula guard on top,
``html.escape`` the HTML one.
"""
from __future__ import annotations

import re
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0, DEL, C1; line and paragraph separators; bidirectional marks, embeddings, overrides and isolates (they reorder
# what a reader sees); lone surrogates (undecodable bytes of a file name)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: object) -> str:
    """``text`` (``str()`` of it; ``None`` is empty) with every control character written as visible text: C0 and
    C1 controls, DEL, ESC (so no escape sequence reaches a terminal), newlines and Unicode line or paragraph
    separators, bidirectional controls, lone surrogates. Honest text comes back unchanged."""
    out = "" if text is None else str(text)
    return _UNSAFE.sub(_shown, out)


def is_inert(text: str) -> bool:
    """True when ``text`` holds no character ``inert`` would rewrite (what tests assert of every output)."""
    return not _UNSAFE.search(text) and all(unicodedata.category(c) != "Cc" for c in text)

