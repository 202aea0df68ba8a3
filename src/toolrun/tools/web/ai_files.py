"""The AI discovery files geo-checker reads beside the page, and which answers count.

llms.txt is looked for at the site root, then at ``/.well-known/`` (the llms.txt
well-known URI proposal), then at ``/docs/`` (where documentation sites keep it);
llms-full.txt at the root, then at ``/.well-known/``; the first answer that is a
real text file wins. ai.txt (root and ``/.well-known/``) and AGENTS.md are only
reported as present or not; ``/ai/summary.json``, ``/ai/faq.json``,
``/ai/service.json`` and the agent manifests ``/.well-known/agent-card.json`` and
``/.well-known/ai-plugin.json`` as present and whether they hold JSON. The page's own
Markdown mirror (the llms.txt proposal's companion ``.md`` page) is fetched too.
An HTML page answered with 2xx (a single-page app's fallback route) never counts
as any of these files.

Names are keys of ``fetching.SITE_FILES`` and of ``Site.files``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from toolrun.tools.web.llms_txt import is_html_page
from toolrun.tools.web.site import SiteFile

LLMS_FILES = ("llms", "llms-well-known", "llms-docs")
LLMS_FULL_FILES = ("llms-full", "llms-full-well-known")
# geo-optimizer's /ai/*.json, then agent manifests: the A2A protocol's agent card and the
# older ChatGPT-plugin manifest.
AI_JSON_FILES = (
    "ai-summary-json",
    "ai-faq-json",
    "ai-service-json",
    "agent-card",
    "ai-plugin",
)
DISCOVERY_FILES = ("ai-txt-well-known", "ai-txt", "agents-md", *AI_JSON_FILES)
MARKDOWN_MIRROR = "markdown-mirror"
LLMS_FULL_MAX_BYTES = 1024 * 1024
DISCOVERY_MAX_BYTES = 4 * 1024  # enough to tell a text file from an HTML page
AI_JSON_MAX_BYTES = 64 * 1024  # enough to read a summary document whole
MARKDOWN_MIRROR_MAX_BYTES = 1024 * 1024
EXTRA_FILE_TIMEOUT_S = 8.0


def markdown_mirror_path(url: str) -> str:
    """The path of a page's Markdown mirror (llms.txt proposal): the page's path with ".md"
    appended, or "index.html.md" after a path that ends in "/"."""
    path = urlsplit(url).path or "/"
    return path + ("index.html.md" if path.endswith("/") else ".md")


def holds_json(file: SiteFile) -> bool:
    """Whether the file's whole body parses as a JSON object or array."""
    if file.truncated:
        return False
    try:
        return isinstance(json.loads(file.text or ""), dict | list)
    except ValueError:
        return False


def is_html_answer(file: SiteFile) -> bool:
    return is_html_page(file.text or "", file.content_type)


def present(file: SiteFile | None) -> bool:
    """A 2xx answer with a body that is not an HTML page."""
    return file is not None and file.found and not is_html_answer(file)


def first_present(files: Iterable[SiteFile | None]) -> SiteFile | None:
    return next((file for file in files if file is not None and present(file)), None)


def fetched(files: Mapping[str, SiteFile], names: Iterable[str]) -> list[SiteFile]:
    """The files among ``names`` that were requested, in order."""
    return [files[name] for name in names if name in files]


def choose_llms_file(files: Mapping[str, SiteFile]) -> SiteFile | None:
    """/llms.txt, or /.well-known/llms.txt when only it is a real text file.

    When neither is, /llms.txt's own answer (404, an HTML page, an error) is the
    one reported.
    """
    return first_present(fetched(files, LLMS_FILES)) or files.get("llms")


def answer(file: SiteFile) -> str:
    """``"answered 404"``, or why there was no answer."""
    if file.status_code is None:
        return f"could not be fetched ({file.error or 'no answer'})"
    if 200 <= file.status_code < 300:
        if not file.found:
            return f"answered {file.status_code} with an empty body"
        if is_html_answer(file):
            return f"answered {file.status_code} with an HTML page"
    return f"answered {file.status_code}"


def answers(files: Iterable[SiteFile]) -> str:
    """``"https://x/a answered 404; https://x/b answered 404"``."""
    return "; ".join(f"{file.url} {answer(file)}" for file in files)
