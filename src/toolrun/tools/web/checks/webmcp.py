"""WebMCP: the tools a page offers agents, read from its HTML (nothing is run).

The declarative API (webmachinelearning/webmcp, declarative-api-explainer.md):
a ``<form toolname tooldescription>`` is a tool; its named form controls are
the parameters (those inside the form), each described by
``toolparamdescription``. Tools a script
registers through ``navigator.modelContext`` exist only once the script runs,
so the source is only searched for the API's name. Lighthouse's agentic
category has the same three concerns (registered tools, form coverage, schema
validity), measured in a browser.
"""

from __future__ import annotations

from typing import Any

from selectolax.lexbor import LexborNode

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

MAX_LISTED = 20
_CONTROLS = "input:not([type=submit i]):not([type=button i]):not([type=reset i]), select, textarea"
_IMPERATIVE = "modelcontext"  # navigator.modelContext, in the lower-cased source


def _attribute(node: LexborNode, name: str) -> str:
    return (node.attributes.get(name) or "").strip()


def _tool(form: LexborNode) -> dict[str, Any]:
    """A declarative tool as an agent would see it, and what is wrong with it."""
    parameters = []
    problems = []
    for control in form.css(_CONTROLS):
        if (control.attributes.get("type") or "").strip().lower() == "hidden":
            continue
        name = _attribute(control, "name")
        if not name:
            problems.append(f"a <{control.tag}> has no name, so it is no parameter")
            continue
        described = _attribute(control, "toolparamdescription")
        parameters.append(
            {
                "name": name,
                "description": described or None,
                "required": "required" in control.attributes,
            }
        )
    description = _attribute(form, "tooldescription")
    if not description:
        problems.append("no tooldescription")
    if not parameters:
        problems.append("no named form controls (the tool takes nothing)")
    return {
        "name": _attribute(form, "toolname"),
        "description": description or None,
        "autoSubmit": "toolautosubmit" in form.attributes,
        "parameters": parameters,
        "problems": problems,
    }


def check_webmcp(site: Site) -> Check:
    page = site.page
    forms = [node for node in page.elements("subresource") if node.tag == "form"]
    declared = page.has_attribute("toolname")
    tools = [_tool(form) for form in forms if declared and _attribute(form, "toolname")]
    imperative = _IMPERATIVE in page.html_lower
    other_forms = len(forms) - len(tools)
    value = {
        "tools": tools[:MAX_LISTED],
        "toolCount": len(tools),
        "imperativeApiMentioned": imperative,
        "formsWithoutTools": other_forms,
    }
    title = "WebMCP tools for agents"
    if not tools:
        detail = "No declarative WebMCP tool (<form toolname>)."
        if imperative:
            detail += (
                " A script mentions navigator.modelContext (its tools exist only when it runs)."
            )
        recommendation = (
            f"{plural(other_forms, 'form')} on the page could be offered to agents as WebMCP "
            "tools: add toolname and tooldescription to the <form> and toolparamdescription "
            "to its fields."
            if other_forms
            else None
        )
        return make("webmcp", title, "info", value, detail, recommendation)
    flawed = [tool for tool in tools if tool["problems"]]
    listed = ", ".join(f'"{tool["name"]}"' for tool in tools[:5])
    if flawed:
        issues = "; ".join(f'"{t["name"]}": {", ".join(t["problems"])}' for t in flawed[:5])
        return make(
            "webmcp",
            title,
            "warn",
            value,
            f"{plural(len(tools), 'declarative tool')} ({listed}); {len(flawed)} incomplete: "
            f"{issues}.",
            "Give every tool form a tooldescription and named fields with "
            "toolparamdescription, so that agents know what it does and what to send.",
        )
    undescribed = sum(
        1 for tool in tools for parameter in tool["parameters"] if not parameter["description"]
    )
    detail = f"{plural(len(tools), 'declarative tool')}: {listed}."
    if undescribed:
        detail += f" {plural(undescribed, 'parameter')} without toolparamdescription."
    return make("webmcp", title, "pass", value, detail)
