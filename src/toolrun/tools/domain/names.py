"""Domain names as the domain tools take them: A-labels, lower case, no trailing dot.

``registrable_domain`` reduces a host to the name a registry holds (``www.example.co.uk``
-> ``example.co.uk``). Without the whole Public Suffix List it knows the common
two-label public suffixes (``data/suffixes.txt``) and otherwise keeps the last two labels.
"""

from __future__ import annotations

import functools
from importlib import resources
from urllib.parse import urlsplit

import idna

from toolrun.net.dns import InvalidName, to_ascii


def normalise_domain(text: str) -> str:
    """``text`` as lower-case A-labels; a URL gives its host. Raises ``ValueError``.

    At least two labels, letters, digits and hyphens only (``_`` is no part of a
    registered name), no label starting or ending with a hyphen.
    """
    value = text.strip()
    if "://" in value:
        value = urlsplit(value).hostname or ""
    value = value.split("/", 1)[0]
    try:
        name = to_ascii(value)
    except InvalidName as exc:
        raise ValueError(str(exc)) from None
    labels = name.split(".")
    if len(labels) < 2:
        raise ValueError("a domain name needs at least two labels, like example.com")
    for label in labels:
        if not all(c.isalnum() or c == "-" for c in label) or not label.isascii():
            raise ValueError(f"label {label!r} may hold only letters, digits and hyphens")
        if label.startswith("-") or label.endswith("-"):
            raise ValueError(f"label {label!r} may not start or end with a hyphen")
    if labels[-1].isdigit():
        raise ValueError("an IP address is not a domain name")
    return name


def unicode_name(name: str) -> str:
    """The U-label form of an A-label name (the name itself when it does not decode)."""
    try:
        return str(idna.decode(name))
    except (idna.IDNAError, UnicodeError):
        return name


def tld(name: str) -> str:
    """The last label."""
    return name.rsplit(".", 1)[-1]


@functools.lru_cache(maxsize=1)
def _two_label_suffixes() -> frozenset[str]:
    text = resources.files("toolrun.data").joinpath("suffixes.txt").read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def registrable_domain(name: str) -> str:
    """The registered domain holding ``name`` (``a.b.example.co.uk`` -> ``example.co.uk``)."""
    labels = name.split(".")
    if len(labels) <= 2:
        return name
    if ".".join(labels[-2:]) in _two_label_suffixes():
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])
