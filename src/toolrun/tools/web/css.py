"""CSS attribute-selector tests in Python, for attributes already read from the tree.

A selector walk over the whole document costs about as much as reading one
attribute of a few hundred elements, so checks that already hold the
attributes of every ``<a>`` or ``<img>`` test them here, with the selector's
exact semantics, instead of walking again.
"""

from __future__ import annotations

import re

# The whitespace CSS splits ``~=`` values on (HTML turns CR into LF before that).
_CSS_SPACE = re.compile(r"[ \t\n\f\r]")


def starts_with_ci(value: str, prefix: str) -> bool:
    """``[attr^=prefix i]`` for an ASCII ``prefix``: ASCII case-insensitive."""
    head = value[: len(prefix)]
    return head.isascii() and head.lower() == prefix


def has_token_ci(value: str | None, token: str) -> bool:
    """``[attr~=token i]`` for an ASCII ``token``: one of the whitespace-separated words."""
    if not value or token not in value.lower():
        return False
    return any(word.isascii() and word.lower() == token for word in _CSS_SPACE.split(value))


def starting_ci(values: list[str], prefix: str) -> list[str]:
    """The values that ``starts_with_ci(value, prefix)``, in order: one ASCII case-insensitive
    search over all of them joined by NULs (attribute values hold none: the parser replaces
    them; if one does, each value is tested on its own)."""
    joined = "\0" + "\0".join(values)
    if joined.count("\0") != len(values):
        return [value for value in values if starts_with_ci(value, prefix)]
    return re.findall("\0(" + re.escape(prefix) + "[^\0]*)", joined, re.I | re.A)
