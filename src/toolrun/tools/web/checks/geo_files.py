"""GEO checks of the optional AI files beside llms.txt: llms-full.txt, ai.txt, AGENTS.md,
the /ai/*.json summaries and the page's Markdown mirror.

None of them is required by a search engine or an assistant, so their absence is
info; only an HTML page served as llms-full.txt or as the Markdown mirror is a problem
worth a warning, because an agent that asks for Markdown gets markup instead, and so
is an /ai/*.json file that does not hold JSON.
"""

from __future__ import annotations

from toolrun.net.errors import format_bytes
from toolrun.tools.web.ai_files import (
    AI_JSON_FILES,
    DISCOVERY_FILES,
    LLMS_FULL_FILES,
    LLMS_FULL_MAX_BYTES,
    MARKDOWN_MIRROR,
    answers,
    fetched,
    first_present,
    holds_json,
    is_html_answer,
    present,
)
from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site


def check_llms_full_txt(site: Site) -> Check | None:
    """/llms-full.txt, else /.well-known/llms-full.txt: size when found, HTML fallback warns."""
    files = fetched(site.files, LLMS_FULL_FILES)
    if not files:
        return None
    found = first_present(files)
    if found is not None:
        text = found.text or ""
        size, words = len(text.encode()), len(text.split())
        read = (
            f" (only the first {format_bytes(LLMS_FULL_MAX_BYTES)} read)" if found.truncated else ""
        )
        return make(
            "llms-full-txt",
            "llms-full.txt is published",
            "pass",
            {"url": found.url, "bytes": size, "words": words, "truncated": found.truncated},
            f"{found.url}: {plural(words, 'word')}, {plural(size, 'byte')}{read}.",
        )
    html = next((file for file in files if file.found and is_html_answer(file)), None)
    if html is not None:
        return make(
            "llms-full-txt",
            "llms-full.txt is an HTML page",
            "warn",
            {"url": html.url, "status": html.status_code, "contentType": html.content_type},
            f"{html.url} answered {html.status_code} with an HTML page, not Markdown "
            "(a single-page app's fallback route?).",
            "Serve llms-full.txt as text/markdown or text/plain, or answer 404.",
        )
    return make(
        "llms-full-txt",
        "No llms-full.txt",
        "info",
        [{"url": file.url, "status": file.status_code, "error": file.error} for file in files],
        f"{answers(files)}. llms-full.txt is optional: the site's documentation as one "
        "Markdown file, for assistants that read everything at once.",
        "Optionally publish /llms-full.txt next to /llms.txt.",
    )


def check_ai_discovery_files(site: Site) -> Check | None:
    """Which of /.well-known/ai.txt, /ai.txt, /AGENTS.md, /ai/{summary,faq,service}.json and
    the agent manifests exist (2xx, not an HTML page); a JSON one counts only if it holds
    JSON."""
    files = fetched(site.files, DISCOVERY_FILES)
    if not files:
        return None
    rows: list[dict[str, object]] = []
    broken: list[str] = []
    for name in DISCOVERY_FILES:
        file = site.files.get(name)
        if file is None:
            continue
        row: dict[str, object] = {"url": file.url, "status": file.status_code}
        row["present"] = present(file)
        if name in AI_JSON_FILES:
            row["json"] = bool(row["present"]) and holds_json(file)
            if row["present"] and not row["json"]:
                row["present"] = False
                broken.append(file.url)
        rows.append(row)
    found = [row["url"] for row in rows if row["present"]]
    if broken:
        return make(
            "ai-discovery-files",
            "An AI discovery file does not hold JSON",
            "warn",
            rows,
            f"{', '.join(broken)} answered, but not with a whole JSON document"
            + (f"; found {', '.join(map(str, found))}." if found else "."),
            "Serve these files as complete JSON documents (application/json), or answer 404.",
        )
    if found:
        return make(
            "ai-discovery-files",
            "AI discovery files are published",
            "pass",
            rows,
            f"Found {plural(len(found), 'file')}: {', '.join(map(str, found))}.",
        )
    return make(
        "ai-discovery-files",
        "No other AI discovery files",
        "info",
        rows,
        f"{answers(files)}. None of these files is a standard that search engines or "
        "assistants rely on.",
        "Optionally describe the site for AI agents in /AGENTS.md or state AI usage terms "
        "in /.well-known/ai.txt.",
    )


def check_markdown_mirror(site: Site) -> Check | None:
    """The page's Markdown mirror (its URL with ".md", llms.txt's companion pages)."""
    file = site.files.get(MARKDOWN_MIRROR)
    if file is None:
        return None
    value = {"url": file.url, "status": file.status_code}
    if present(file):
        text = file.text or ""
        words = len(text.split())
        return make(
            "markdown-mirror",
            "The page has a Markdown version",
            "pass",
            {**value, "words": words, "truncated": file.truncated},
            f"{file.url}: {plural(words, 'word')} of Markdown for agents that read it instead "
            "of the HTML.",
        )
    if file.found and is_html_answer(file):
        return make(
            "markdown-mirror",
            "The Markdown URL answers with an HTML page",
            "warn",
            value,
            f"{file.url} answered {file.status_code} with an HTML page, not Markdown "
            "(a single-page app's fallback route?).",
            "Serve the page's Markdown version as text/markdown at its .md URL, or answer 404.",
        )
    return make(
        "markdown-mirror",
        "No Markdown version of the page",
        "info",
        value,
        f"{answers([file])}. The llms.txt proposal suggests a clean Markdown copy of each page "
        'at its URL with ".md" appended; assistants that find one skip the HTML.',
        f"Optionally publish this page as Markdown at {file.url}.",
    )
