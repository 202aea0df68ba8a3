"""HTTP ``Link`` header values (RFC 8288) as (url, params) pairs."""

from __future__ import annotations

import re

_LINK = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]+)*)")
_PARAM = re.compile(r";\s*([^=;\s]+)\s*(?:=\s*(\"[^\"]*\"|[^;,\s]+))?")


def parse_link_header(values: list[str]) -> list[tuple[str, dict[str, str]]]:
    """Every link of every value; parameter names lower-cased, quotes removed."""
    links = []
    for value in values:
        for match in _LINK.finditer(value):
            params = {
                name.lower(): (raw or "").strip('"') for name, raw in _PARAM.findall(match.group(2))
            }
            links.append((match.group(1).strip(), params))
    return links


def links_with_rel(values: list[str], rel: str) -> list[tuple[str, dict[str, str]]]:
    return [
        (url, params)
        for url, params in parse_link_header(values)
        if rel in params.get("rel", "").lower().split()
    ]
