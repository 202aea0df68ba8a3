"""Agent accessibility: controls an agent (or a screen reader) cannot name.

A static subset of the axe rules Lighthouse's agentic ``agent-accessibility-tree``
audit wraps: ``button-name``, ``link-name``, ``input-image-alt``, ``label``
(a form field needs a <label>, aria-label, aria-labelledby, title or
placeholder) and ``select-name``. The candidates are found with selectors, so
the cost does not grow with the number of well-formed controls' attributes.
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
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


def _has_text(node: LexborNode) -> bool:
    if node.text(deep=True).strip():
        return True
    return any((img.attributes.get("alt") or "").strip() for img in node.css("img[alt]"))


def check_agent_accessibility(site: Site) -> Check:
    tree = site.page.tree
    labelled = {(label.attributes.get("for") or "") for label in tree.css("label[for]")}
    problems: list[dict[str, str]] = []
    for node in tree.css("button" + _NAMED):
        if not _has_text(node):
            problems.append({"rule": "button-name", "element": "button"})
    for node in tree.css("a[href]" + _NAMED):
        if not _has_text(node):
            problems.append({"rule": "link-name", "element": node.attributes.get("href") or ""})
    for node in tree.css("input[type=image i]:not([alt])" + _NAMED):
        problems.append({"rule": "input-image-alt", "element": node.attributes.get("src") or ""})
    for node in tree.css(_FIELDS):
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
