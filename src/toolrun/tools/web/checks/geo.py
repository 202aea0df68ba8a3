"""GEO / AI readiness: AI crawler access, llms.txt, Content-Signal, rendered text, E-E-A-T signals.

AI crawler tokens come from ai.robots.txt's ``robots.json`` and the vendors'
crawler pages, grouped by what a block costs the site:

* search — bots that build AI search indexes and citations: blocking them
  removes the site from AI answers (fail);
* user — fetches made when a user asks an assistant about the page (warn);
* training — model-training crawlers: blocking them is a legitimate choice
  and is reported, not penalised.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from operator import methodcaller
from typing import Any, Literal

from selectolax.lexbor import LexborNode

from toolrun.tools.web.ai_files import LLMS_FILES, answer, answers, fetched
from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.checks.links import link_facts
from toolrun.tools.web.models import Check
from toolrun.tools.web.page import LANDMARK_TAGS, Page, normalize_space
from toolrun.tools.web.preview import (
    AUTHOR,
    MODIFIED,
    PUBLISHED,
    clean_author,
    first,
    normalize_date,
)
from toolrun.tools.web.site import Site, SiteFile

Tier = Literal["training", "search", "user"]
AI_CRAWLERS: tuple[tuple[str, str, Tier], ...] = (
    ("GPTBot", "OpenAI", "training"),
    ("ClaudeBot", "Anthropic", "training"),
    ("Google-Extended", "Google", "training"),
    ("Applebot-Extended", "Apple", "training"),
    ("CCBot", "Common Crawl", "training"),
    ("meta-externalagent", "Meta", "training"),
    ("Bytespider", "ByteDance", "training"),
    ("Amazonbot", "Amazon", "training"),
    ("cohere-training-data-crawler", "Cohere", "training"),
    ("DeepSeekBot", "DeepSeek", "training"),
    ("AI2Bot", "Allen Institute for AI", "training"),
    ("OAI-SearchBot", "OpenAI", "search"),
    ("Claude-SearchBot", "Anthropic", "search"),
    ("PerplexityBot", "Perplexity", "search"),
    ("Googlebot", "Google (Search, AI Overviews)", "search"),
    ("bingbot", "Microsoft (Bing, Copilot)", "search"),
    ("Applebot", "Apple (Siri, Spotlight)", "search"),
    ("DuckAssistBot", "DuckDuckGo", "search"),
    ("Amzn-SearchBot", "Amazon", "search"),
    ("YouBot", "You.com", "search"),
    ("ChatGPT-User", "OpenAI", "user"),
    ("Claude-User", "Anthropic", "user"),
    ("Perplexity-User", "Perplexity", "user"),
    ("MistralAI-User", "Mistral", "user"),
    ("Meta-ExternalFetcher", "Meta", "user"),
    ("Amzn-User", "Amazon", "user"),
)
SSR_FAIL_CHARS = 100  # geokit R09: an empty shell
SSR_THIN_CHARS = 500
FRESH_DAYS = 90
STALE_DAYS = 365
LANDMARKS = LANDMARK_TAGS
_SPA_IDS = frozenset({"root", "app", "__next", "__nuxt", "svelte"})
_SPA_ROOTS = "#root, #app, #__next, #__nuxt, #svelte, [data-reactroot], app-root"
_SPA_ID_SELECTOR = ", ".join(f'[id="{value}" i]' for value in sorted(_SPA_IDS))
_SPA_ID_VALUE = re.compile(
    r"=[\t\n\f\r ]*(?:\"(?:{0})\"|'(?:{0})'|(?:{0})[\t\n\f\r >])".format("|".join(sorted(_SPA_IDS)))
)
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
_INJECTION = re.compile(
    r"ignore (all |any )?(previous|prior|above) instructions|disregard (all )?previous|"
    r"you are (now )?an? (ai|language model|assistant)|system prompt",
    re.I,
)
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*[01](px)?\b", re.I
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ENDS_WITH_QUESTION_MARK = methodcaller("endswith", "?")
NUMBERS_SAMPLE_CHARS = 100_000
COMMENT_SAMPLE_CHARS = 500_000
# Cheap substring gates before the injection regex (its alternation is slow on long text).
_INJECTION_HINTS = ("instruction", "disregard", "system prompt", "you are an", "you are now")
_HINT_WORDS = ("instruction", "disregard", "system", "you")  # a word of each hint


def crawler_access(site: Site) -> list[dict[str, Any]]:
    """One row per AI crawler token: may it fetch the page under robots.txt?"""
    robots = site.robots
    rows = []
    for token, operator, tier in AI_CRAWLERS:
        if robots is None:
            rows.append(
                {
                    "token": token,
                    "operator": operator,
                    "tier": tier,
                    "allowed": True,
                    "group": None,
                    "line": None,
                }
            )
            continue
        verdict = robots.verdict(site.page.final_url, token)
        rows.append(
            {
                "token": token,
                "operator": operator,
                "tier": tier,
                "allowed": verdict.allowed,
                "group": verdict.agent_group,
                "line": verdict.line,
            }
        )
    return rows


def check_ai_crawlers(site: Site) -> Check:
    rows = crawler_access(site)
    grouped = {
        tier: [r for r in rows if r["tier"] == tier] for tier in ("training", "search", "user")
    }
    blocked = {
        tier: [r["token"] for r in items if not r["allowed"]] for tier, items in grouped.items()
    }
    value = {tier: items for tier, items in grouped.items()}
    summary = "; ".join(
        f"{tier}: {len(names)} of {len(grouped[tier])} blocked" for tier, names in blocked.items()
    )
    if blocked["search"]:
        return make(
            "ai-crawler-access",
            "AI search crawlers are blocked",
            "fail",
            value,
            f"Blocked: {', '.join(blocked['search'])} ({summary}). These bots build the "
            "indexes AI answers cite.",
            "Allow the search-tier bots in robots.txt; block training bots separately if you wish.",
        )
    if blocked["user"]:
        return make(
            "ai-crawler-access",
            "AI assistants cannot fetch the page",
            "warn",
            value,
            f"Blocked: {', '.join(blocked['user'])} ({summary}).",
            "Allow user-initiated fetchers so assistants can read the page on request.",
        )
    detail = summary + "."
    if blocked["training"]:
        detail += " Training crawlers are blocked, search and user fetchers allowed."
    return make(
        "ai-crawler-access", "AI search and assistant crawlers are allowed", "pass", value, detail
    )


def check_content_signals(site: Site) -> Check:
    robots = site.robots
    signals = robots.content_signals if robots is not None else []
    issues = robots.signal_issues if robots is not None else []
    value = {
        "signals": [{"line": line, **values} for line, values in signals],
        "problems": [{"line": i.line, "message": i.message} for i in issues],
    }
    if issues:
        return make(
            "content-signals",
            "Content-Signal lines are malformed",
            "warn",
            value,
            f"{plural(len(issues), 'line')}: {issues[0].message}.",
            "Write 'Content-Signal: search=yes, ai-input=yes, ai-train=no'.",
        )
    if not signals:
        return make(
            "content-signals",
            "No Content-Signal preferences",
            "info",
            value,
            "robots.txt states no AI usage preferences (contentsignals.org).",
            "Optionally declare Content-Signal: search=, ai-input=, ai-train=.",
        )
    return make(
        "content-signals",
        "Content-Signal preferences declared",
        "pass",
        value,
        "; ".join(", ".join(f"{k}={v}" for k, v in values.items()) for _, values in signals) + ".",
    )


def _fallback_note(site: Site, file: SiteFile) -> str:
    """Where llms.txt was found when it was not at /llms.txt."""
    root = site.files.get("llms")
    if root is None or root is file:
        return ""
    return f" Found at {file.url} ({root.url} {answer(root)})."


def check_llms_txt(site: Site) -> Check:
    """/llms.txt, or /.well-known/llms.txt when only it is a text file (see ``ai_files``)."""
    file = site.llms_file
    if file is None or file.status_code is None:
        reason = file.error if file is not None and file.error else "no answer"
        return make(
            "llms-txt",
            "llms.txt could not be fetched",
            "fail",
            None,
            f"Fetching /llms.txt failed: {reason}.",
            "Make /llms.txt answer 200 or 404.",
        )
    if file.status_code >= 500:
        return make(
            "llms-txt",
            "llms.txt answered with a server error",
            "fail",
            file.status_code,
            f"/llms.txt answered {file.status_code}.",
            "Fix the server error on /llms.txt.",
        )
    llms = site.llms
    if llms is None:
        return make(
            "llms-txt",
            "No llms.txt",
            "warn",
            {"url": file.url, "status": file.status_code},
            f"{answers(fetched(site.files, LLMS_FILES) or [file])}.",
            "Publish /llms.txt: '# Site name', a '> summary', and '## ' sections of "
            "[title](url) links (llmstxt.org).",
        )
    note = _fallback_note(site, file)
    value = {
        "url": file.url,
        "title": llms.title,
        "summary": llms.summary,
        "sections": llms.sections,
        "links": len(llms.links),
        "chars": llms.chars,
        "errors": llms.errors,
        "advice": llms.advice,
    }
    if llms.errors:
        return make(
            "llms-txt",
            "llms.txt is not well-formed",
            "fail",
            value,
            "llms.txt " + "; ".join(llms.errors) + "." + note,
            "Start with '# Name' and list pages as [title](url) links.",
        )
    if llms.advice:
        return make(
            "llms-txt",
            "llms.txt could be better structured",
            "warn",
            value,
            "; ".join(llms.advice).capitalize() + "." + note,
            "Follow the llmstxt.org structure.",
        )
    return make(
        "llms-txt",
        "llms.txt is well-formed",
        "pass",
        value,
        f"{llms.title!r}, {plural(len(llms.sections), 'section')}, "
        f"{plural(len(llms.links), 'link')}." + note,
    )


def _app_roots(page: Page) -> list[LexborNode]:
    """``tree.css(_SPA_ROOTS)``, skipped when no element can match: no id names an app root
    (compared case-insensitively, as quirks mode does) and the source never spells
    ``data-reactroot`` or ``<app-root``."""
    # ASCII case-insensitive equals lower() equality here: no other character lower-cases
    # into these ids' letters. Without character references an attribute value is spelled
    # in the source as it is, quoted or ended by whitespace or ">".
    source = page.html_lower
    if "data-reactroot" in source or "<app-root" in source:
        return page.tree.css(_SPA_ROOTS)
    spelled = "&" in page.html or _SPA_ID_VALUE.search(source) is not None
    if spelled and page.tree.css_first(_SPA_ID_SELECTOR) is not None:
        return page.tree.css(_SPA_ROOTS)
    return []


def check_rendered_text(site: Site) -> Check:
    page = site.page
    chars = page.text_length
    empty_roots = [
        f"#{node.attributes.get('id')}" if node.attributes.get("id") else node.tag
        for node in _app_roots(page)
        if len(normalize_space(node.text(deep=True))) < 50
    ]
    value = {
        "chars": chars,
        "words": page.word_count,
        "scripts": page.script_count,
        "frameworks": page.framework_markers,
        "emptyAppRoots": empty_roots,
        "noscriptChars": len(page.noscript_text),
    }
    if chars < SSR_FAIL_CHARS:
        return make(
            "server-rendered-text",
            "Page is an empty JavaScript shell",
            "fail",
            value,
            f"Only {chars} characters of text without JavaScript"
            + (f" (empty app root {empty_roots[0]})" if empty_roots else "")
            + ". Most AI fetchers run no JavaScript.",
            "Server-render or prerender the main content.",
        )
    if chars < SSR_THIN_CHARS:
        return make(
            "server-rendered-text",
            "Little server-rendered text",
            "warn",
            value,
            f"{chars} characters of text without JavaScript (thin below {SSR_THIN_CHARS}).",
            "Render the main content in the HTML response.",
        )
    return make(
        "server-rendered-text",
        "Content is server-rendered",
        "pass",
        value,
        f"{chars} characters of text in the HTML response.",
    )


def _faq_markup(site: Site) -> int:
    page = site.page
    hints = sum(node.css_matches("details > summary") for node in page.elements("summary"))
    terms = sum(node.css_matches("dl > dt") for node in page.elements("dt"))
    hints += terms if terms >= 2 else 0
    # Text and attribute values hold only what the source spells, or a character reference.
    literal = "&" not in page.html
    if not literal or "faq" in page.html_lower or "accordion" in page.html_lower:
        hints += len(page.tree.css("[class*=faq i], [id*=faq i], [class*=accordion i]"))
    if literal and "?" not in page.html:
        return hints  # no heading can end with "?"
    texts = map(str.rstrip, page.heading_texts_at((2, 3, 4)))
    questions = sum(map(_ENDS_WITH_QUESTION_MARK, texts))
    return hints + (questions if questions >= 2 else 0)


def check_faq(site: Site) -> Check:
    markup = _faq_markup(site)
    schema = site.json_ld.of_type("FAQPage", "QAPage")
    value = {"faqMarkup": markup, "faqSchema": bool(schema)}
    if markup and schema:
        return make(
            "faq",
            "FAQ content with FAQPage schema",
            "pass",
            value,
            "Question/answer content is marked up and described by FAQPage.",
        )
    if markup:
        return make(
            "faq",
            "FAQ content without FAQPage schema",
            "warn",
            value,
            "The page has question/answer content but no FAQPage JSON-LD.",
            "Describe the questions with FAQPage JSON-LD (Question + acceptedAnswer).",
        )
    if schema:
        return make(
            "faq",
            "FAQPage schema without visible FAQ markup",
            "warn",
            value,
            "Structured FAQ content should also be visible on the page.",
            "Show the questions and answers in the page body.",
        )
    return make(
        "faq",
        "No FAQ content",
        "info",
        value,
        "Question-and-answer sections are easy for AI answers to quote.",
        "Consider an FAQ section for common questions.",
    )


def check_author(site: Site) -> Check:
    author, source = first(site, AUTHOR, clean_author)
    if author:
        return make(
            "author",
            "Author is stated",
            "pass",
            {"author": author, "source": source},
            f"Author {author!r} from {source}.",
        )
    return make(
        "author",
        "No author signal",
        "warn",
        None,
        "No author in JSON-LD, meta author, article:author, rel=author or a byline.",
        "Name the author (Article.author in JSON-LD and a visible byline).",
    )


def check_dates(site: Site, now: datetime | None = None) -> Check:
    published, published_source = first(site, PUBLISHED, normalize_date)
    modified, modified_source = first(site, MODIFIED, normalize_date)
    value = {
        "published": published,
        "publishedSource": published_source,
        "modified": modified,
        "modifiedSource": modified_source,
        "ageDays": None,
    }
    latest = modified or published
    if latest is None:
        return make(
            "dates",
            "No publication date",
            "warn",
            value,
            "No datePublished/dateModified, article:*_time or <time datetime>.",
            "Add datePublished and dateModified (JSON-LD) and a visible date.",
        )
    moment = datetime.fromisoformat(latest)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    age = max(0, ((now or datetime.now(UTC)) - moment).days)
    value["ageDays"] = age
    if age > STALE_DAYS:
        return make(
            "dates",
            "Content looks stale",
            "warn",
            value,
            f"Last dated {age} days ago (stale after {STALE_DAYS}).",
            "Review and update the content, then update dateModified.",
        )
    label = "very fresh" if age <= FRESH_DAYS else "fresh"
    return make("dates", "Content is dated", "pass", value, f"Last dated {age} days ago ({label}).")


def check_landmarks(site: Site) -> Check:
    found = [tag for tag in LANDMARKS if site.page.has(tag)]
    if len(found) >= 3:
        return make(
            "semantic-landmarks",
            "Uses semantic landmarks",
            "pass",
            found,
            ", ".join(f"<{t}>" for t in found) + ".",
        )
    return make(
        "semantic-landmarks",
        "Few semantic landmarks",
        "warn",
        found,
        f"{plural(len(found), 'landmark element')} ({', '.join(found) or 'none'}); "
        "landmarks let parsers separate content from chrome.",
        "Wrap content in <main>/<article> and navigation in <nav>, <header>, <footer>.",
    )


def check_quotable_content(site: Site) -> Check:
    page = site.page
    lists = page.count("ul") + page.count("ol")
    tables = page.count("table")
    numbers = len(_NUMBER.findall(page.text_prefix(NUMBERS_SAMPLE_CHARS)))
    outbound = link_facts(site).counts.external

    value = {"lists": lists, "tables": tables, "numbers": numbers, "outboundLinks": outbound}
    if lists or tables:
        return make(
            "quotable-content",
            "Has lists or tables",
            "pass",
            value,
            f"{plural(lists, 'list')}, {plural(tables, 'table')}, {numbers} figures, "
            f"{plural(outbound, 'outbound link')}.",
        )
    return make(
        "quotable-content",
        "No lists or tables",
        "info",
        value,
        "Structured lists, tables, figures and cited sources are easy to quote.",
        "Summarise key facts as lists or tables and cite sources.",
    )


def _injection(text: str) -> bool:
    lowered = text.lower()
    if not any(hint in lowered for hint in _INJECTION_HINTS):
        return False
    return _INJECTION.search(text) is not None


def _commented_injection(html: str) -> bool:
    """Prompt-injection phrasing inside an HTML comment of the first 500,000 characters."""
    if html.find("<!--", 0, COMMENT_SAMPLE_CHARS) == -1:
        return False
    sample = html[:COMMENT_SAMPLE_CHARS]
    if not _injection(sample):
        return False
    comments = re.findall(r"<!--(.*?)-->", sample, re.S)
    return any(_INJECTION.search(comment) for comment in comments)


def check_hidden_instructions(site: Site) -> Check:
    page = site.page
    findings: list[str] = []
    # ``page.text`` is this raw text with whitespace collapsed, which keeps these characters
    # and words: look in the raw text, and build ``page.text`` only if a hint word occurs.
    raw = page.body_text
    invisible = 0 if raw.isascii() else len(_INVISIBLE.findall(raw))
    if invisible:
        findings.append(f"{invisible} invisible Unicode characters in the text")
    lowered = raw.lower()
    if any(word in lowered for word in _HINT_WORDS) and _injection(page.text):
        findings.append("text addressed to AI models (prompt-injection phrasing)")
    if _commented_injection(page.html):
        findings.append("AI instructions inside HTML comments")
    styled = page.tree.css("[style]") if page.has_attribute("style") else []
    hidden = [
        n
        for n in styled
        if _HIDDEN_STYLE.search(n.attributes.get("style") or "")
        and len(n.text(deep=True).strip()) > 200
    ]
    if hidden:
        findings.append(f"{plural(len(hidden), 'hidden element')} with long text")
    if findings:
        return make(
            "hidden-instructions",
            "Hidden text or AI instructions found",
            "warn",
            findings,
            "; ".join(findings).capitalize() + ".",
            "Remove hidden text: AI systems and search engines treat it as manipulation.",
        )
    return make(
        "hidden-instructions",
        "No hidden text or AI instructions",
        "pass",
        [],
        "No invisible characters, hidden blocks or prompt-injection phrases.",
    )
