"""Agent accessibility: controls an agent (or a screen reader) cannot name.

A static subset of the axe rules Lighthouse's agentic ``agent-accessibility-tree``
audit wraps: ``button-name``, ``link-name``, ``input-image-alt``, ``label``
(a form field needs a <label>, aria-label, aria-labelledby, title or
placeholder) and ``select-name``. Controls come from the page's element index
and links reuse its anchor texts: only unnamed candidates are examined further.
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.page import Page
from toolrun.tools.web.site import Site

_NAMED = ":not([aria-label]):not([aria-labelledby]):not([title])"
_FIELDS = (
    "input:not([type=hidden i]):not([type=submit i]):not([type=button i]):not([type=reset i])"
    ":not([type=image i])"
    + _NAMED
    + ":not([placeholder]), textarea"
    + _NAMED
    + ":not([placeholder]), select"
    + _NAMED
)
_NAME_ATTRIBUTES = ("aria-label", "aria-labelledby", "title")


def _has_text(node: LexborNode) -> bool:
    return bool(node.text(deep=True).strip()) or _has_image_alt(node)


def _has_image_alt(node: LexborNode) -> bool:
    return any((img.attributes.get("alt") or "").strip() for img in node.css("img[alt]"))


def _unnamed(attrs: dict[str, str | None]) -> bool:
    """CSS ``:not([aria-label]):not([aria-labelledby]):not([title])``."""
    return not any(name in attrs for name in _NAME_ATTRIBUTES)


def _unnamed_links(page: Page) -> list[str]:
    """hrefs of ``a[href]`` without text, alt text or a naming attribute, in document order."""
    blank = [index for index, text in enumerate(page.anchor_texts) if not text.strip()]
    found = []
    for index in blank:
        attrs, node = page.anchor_attrs[index], page.anchor_nodes[index]
        if "href" in attrs and _unnamed(attrs) and not _has_image_alt(node):
            found.append(attrs.get("href") or "")
    return found


def check_agent_accessibility(site: Site) -> Check:
    page = site.page
    labelled = {
        (label.attributes.get("for") or "")
        for label in page.elements("label")
        if "for" in label.attrs
    }
    problems: list[dict[str, str]] = []
    for node in page.elements("button"):
        if _unnamed(node.attributes) and not _has_text(node):
            problems.append({"rule": "button-name", "element": "button"})
    for href in _unnamed_links(page):
        problems.append({"rule": "link-name", "element": href})
    for node in page.elements("input"):
        if node.css_matches("input[type=image i]:not([alt])" + _NAMED):
            problems.append(
                {"rule": "input-image-alt", "element": node.attributes.get("src") or ""}
            )
    for node in page.elements("field"):
        if not node.css_matches(_FIELDS):
            continue
        if (node.attributes.get("id") or "") in labelled and node.attributes.get("id"):
            continue
        parent = node.parent
        inside_label = False
        while parent is not None and not inside_label:
            inside_label = parent.tag == "label"
            parent = parent.parent
        if not inside_label:
            rule = "select-name" if node.tag == "select" else "label"
            problems.append(
                {"rule": rule, "element": node.attributes.get("name") or node.tag or ""}
            )
    if problems:
        rules = sorted({p["rule"] for p in problems})
        return make(
            "agent-accessibility",
            "Controls without accessible names",
            "warn",
            problems[:50],
            f"{plural(len(problems), 'control')} cannot be named ({', '.join(rules)}); "
            "agents and screen readers cannot tell what they do.",
            "Give every button and link text or aria-label, and every field a <label>.",
        )
    return make(
        "agent-accessibility",
        "Controls have accessible names",
        "pass",
        [],
        "Buttons, links and form fields can all be named.",
    )
