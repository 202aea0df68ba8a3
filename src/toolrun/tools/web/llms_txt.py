"""llms.txt (llmstxt.org): parse the Markdown file and judge its format.

Lighthouse's ``llms-txt`` rules are the hard ones (an H1 line, at least one
Markdown link, at least 50 characters). The proposal's structure — the H1
first, a blockquote summary, H2 sections of ``[name](url)`` lists, an
``Optional`` section — and squirrelscan's checks (an HTML page served instead,
link targets absolute or root-relative) are reported as softer findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LH_H1 = re.compile(r"^\s*#\s+.+", re.M)
LH_LINK = re.compile(r"\[.+\]\(.+\)")
MIN_CHARS = 50
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_H2 = re.compile(r"^##\s+(.+?)\s*$", re.M)


@dataclass
class LlmsTxt:
    """The parsed file and the problems found, split into errors and advice."""

    title: str | None
    summary: str | None
    sections: list[str]
    links: list[str]
    chars: int
    errors: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors


def is_html_page(text: str, content_type: str | None) -> bool:
    """An HTML page served in place of a text file (often a single-page app's fallback route)."""
    start = text.lstrip("\ufeff \t\r\n")[:15].lower()
    return (content_type or "").startswith("text/html") or start.startswith(("<!doctype", "<html"))


def parse_llms_txt(text: str, content_type: str | None = None) -> LlmsTxt:
    """Parse ``text``; ``content_type`` lets an HTML fallback page be recognised."""
    stripped = text.lstrip("\ufeff \t\r\n")
    lines = [line.rstrip() for line in stripped.splitlines()]
    first = next((line for line in lines if line.strip()), "")
    title = first[2:].strip() if first.startswith("# ") else None
    summary = next((line.lstrip("> ").strip() for line in lines if line.startswith(">")), None)
    links = [match.group(2) for match in _LINK.finditer(stripped)]
    result = LlmsTxt(
        title=title,
        summary=summary,
        sections=[match.group(1) for match in _H2.finditer(stripped)],
        links=links,
        chars=len(stripped),
    )
    if is_html_page(stripped, content_type):
        result.errors.append("the server answered with an HTML page, not Markdown")
        return result
    if not LH_H1.search(stripped):
        result.errors.append("missing a required H1 (a line starting with '# ')")
    if not LH_LINK.search(stripped):
        result.errors.append("does not appear to contain any links")
    if len(stripped) < MIN_CHARS:
        result.errors.append(
            f"suspiciously short ({len(stripped)} characters, fewer than {MIN_CHARS})"
        )
    if LH_H1.search(stripped) and title is None:
        result.advice.append("the H1 should be the first line")
    if summary is None:
        result.advice.append("add a '> ' blockquote summary after the H1")
    if not result.sections:
        result.advice.append("group links under '## ' sections")
    odd = [link for link in links if not link.startswith(("http://", "https://", "/"))]
    if odd:
        result.advice.append(
            f"{len(odd)} link(s) are neither absolute nor root-relative: {odd[:3]}"
        )
    return result
