"""GEO checks of the optional AI files beside llms.txt: llms-full.txt, ai.txt and AGENTS.md.

None of them is required by a search engine or an assistant, so their absence is
info; only an HTML page served as llms-full.txt is a problem worth a warning, because
an agent that asks for the site's full text gets markup instead.
"""

from __future__ import annotations

from toolrun.net.errors import format_bytes
from toolrun.tools.web.ai_files import (
    DISCOVERY_FILES,
    LLMS_FULL_FILES,
    LLMS_FULL_MAX_BYTES,
    answers,
    fetched,
    first_present,
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
    """Which of /.well-known/ai.txt, /ai.txt and /AGENTS.md exist (2xx, not an HTML page)."""
    files = fetched(site.files, DISCOVERY_FILES)
    if not files:
        return None
    rows = [
        {"url": file.url, "status": file.status_code, "present": present(file)} for file in files
    ]
    found = [row["url"] for row in rows if row["present"]]
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
