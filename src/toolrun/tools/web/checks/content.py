"""Document content: title, description, headings, word count, lang, viewport, charset, doctype.

Length ranges (characters, after collapsing whitespace):

* title 30-60: Google's result titles are cut at about 600 px, roughly 60
  characters; under 30 wastes the space (seo-analyzer's 30-60, between
  SEOnaut's 20-60 and python-seo-analyzer's 10-70).
* description 70-160: Google's snippets show about 150-160 characters; under 70
  reads as a stub (SEOnaut's 80-160 and geokit's 50-160 bracket it).

Out-of-range lengths warn; only a missing title or description fails.
"""

from __future__ import annotations

import re
from operator import sub

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check, CheckStatus
from toolrun.tools.web.page import Page, bom_charset, clean_text, header_charset, meta_charset
from toolrun.tools.web.site import Site

TITLE_RANGE = (30, 60)
DESCRIPTION_RANGE = (70, 160)
MIN_WORDS = 200  # SEOnaut's "little content" threshold
FAIL_WORDS = 50
LANG_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_VIEWPORT_SCALE = re.compile(r"maximum-scale\s*=\s*([0-9.]+)", re.I)


def check_title(site: Site) -> Check:
    title = site.page.title
    if not title:
        return make(
            "document-title",
            "Document doesn't have a <title>",
            "fail",
            None,
            "The page has no title; search results and tabs show the URL instead.",
            "Add a unique, descriptive <title> to the <head>.",
        )
    return make("document-title", "Document has a <title>", "pass", title, f"Title: {title!r}.")


def check_title_length(site: Site) -> Check | None:
    title = site.page.title
    if not title:
        return None
    low, high = TITLE_RANGE
    count = len(title)
    if low <= count <= high:
        return make(
            "title-length",
            "Title length is good",
            "pass",
            count,
            f"{count} characters (aim for {low}-{high}).",
        )
    problem = "short" if count < low else "long and may be truncated in results"
    return make(
        "title-length",
        "Title length is outside the recommended range",
        "warn",
        count,
        f"{count} characters is {problem} (aim for {low}-{high}).",
        f"Write a title of {low}-{high} characters that names the page's topic first.",
    )


def check_single_title(site: Site) -> Check | None:
    count = len(site.page.titles)
    if count <= 1:
        return None
    return make(
        "multiple-titles",
        "More than one <title>",
        "warn",
        count,
        f"The document has {count} <title> elements; only the first is used.",
        "Keep a single <title> in the <head>.",
    )


def check_description(site: Site) -> Check:
    values = site.page.meta_map.get("description", [])
    text = next((value for value in values if value.strip()), None)
    if text is None:
        detail = "The description is empty." if values else "There is no meta description."
        return make(
            "meta-description",
            "Document doesn't have a meta description",
            "fail",
            None,
            detail + " Search engines then pick a snippet from the page text.",
            'Add <meta name="description" content="..."> summarising the page.',
        )
    if len(values) > 1:
        return make(
            "meta-description",
            "More than one meta description",
            "warn",
            values,
            f"{len(values)} description tags; engines may pick either.",
            "Keep a single meta description.",
        )
    return make(
        "meta-description",
        "Document has a meta description",
        "pass",
        text,
        "The page has a meta description.",
    )


def check_description_length(site: Site) -> Check | None:
    text = site.page.meta("description")
    if not text:
        return None
    low, high = DESCRIPTION_RANGE
    count = len(text)
    if low <= count <= high:
        return make(
            "description-length",
            "Description length is good",
            "pass",
            count,
            f"{count} characters (aim for {low}-{high}).",
        )
    problem = "short" if count < low else "long and will be truncated"
    return make(
        "description-length",
        "Description length is outside the recommended range",
        "warn",
        count,
        f"{count} characters is {problem} (aim for {low}-{high}).",
        f"Write a description of {low}-{high} characters.",
    )


def check_h1(site: Site) -> Check:
    h1 = site.page.h1_texts
    if not h1:
        return make(
            "h1",
            "No <h1> heading",
            "fail",
            [],
            "The page has no top-level heading stating its topic.",
            "Add one <h1> that says what the page is about.",
        )
    if len(h1) > 1:
        return make(
            "h1",
            "More than one <h1> heading",
            "warn",
            h1,
            f"{len(h1)} <h1> headings; one main heading makes the topic unambiguous.",
            "Keep one <h1> and demote the others to <h2>.",
        )
    if not h1[0]:
        return make(
            "h1",
            "The <h1> heading is empty",
            "warn",
            h1,
            "The <h1> has no text.",
            "Put the page's topic in the <h1>.",
        )
    return make("h1", "One <h1> heading", "pass", h1, f"<h1>: {h1[0]!r}.")


def check_heading_order(site: Site) -> Check | None:
    levels = site.page.heading_levels
    if not levels:
        return None
    skips = []
    if max(map(sub, levels[1:], levels), default=0) > 1:  # some level is skipped
        previous = 0
        for level, raw in zip(levels, site.page.heading_texts, strict=True):
            if previous and level > previous + 1:
                text = clean_text(raw)
                skips.append(f"h{previous} -> h{level} ({text[:60]!r})")
            previous = level
    outline = [f"h{level}" for level in levels[:50]]
    if skips:
        return make(
            "heading-order",
            "Heading levels are skipped",
            "warn",
            {"outline": outline, "skips": skips},
            f"{plural(len(skips), 'skipped level')}: {'; '.join(skips[:5])}.",
            "Nest headings one level at a time (h1 > h2 > h3).",
        )
    return make(
        "heading-order",
        "Headings are in sequential order",
        "pass",
        {"outline": outline},
        f"{plural(len(levels), 'heading')}, no skipped levels.",
    )


def check_word_count(site: Site) -> Check:
    words = site.page.word_count
    if words >= MIN_WORDS:
        return make("word-count", "Enough text content", "pass", words, f"{words} words of text.")
    status: CheckStatus = "fail" if words < FAIL_WORDS else "warn"
    return make(
        "word-count",
        "Little text content",
        status,
        words,
        f"{words} words of server-rendered text (thin below {MIN_WORDS}).",
        "Add substantive text; if the content is rendered by JavaScript, render it on "
        "the server too.",
    )


def check_lang(site: Site) -> Check:
    lang = site.page.lang
    if lang is None:
        return make(
            "html-lang",
            "<html> has no lang attribute",
            "fail",
            None,
            "Without lang, screen readers and search engines must guess the language.",
            'Add lang to <html>, e.g. <html lang="en">.',
        )
    if not LANG_TAG.match(lang):
        return make(
            "html-lang",
            "<html lang> is not a valid language tag",
            "warn",
            lang,
            f"{lang!r} is not a BCP 47 language tag.",
            'Use a tag like "en" or "pt-BR".',
        )
    return make("html-lang", "<html> has a valid lang attribute", "pass", lang, f"lang={lang!r}.")


def check_viewport(site: Site) -> Check:
    content = site.page.meta("viewport")
    if content is None:
        return make(
            "viewport",
            'No <meta name="viewport">',
            "fail",
            None,
            "Without a viewport tag mobile browsers render a desktop-width page.",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
        )
    lowered = content.replace(" ", "").lower()
    if "width=device-width" not in lowered:
        return make(
            "viewport",
            "Viewport does not set width=device-width",
            "warn",
            content,
            "The viewport tag does not adapt the layout width to the device.",
            "Set width=device-width, initial-scale=1.",
        )
    scale = _VIEWPORT_SCALE.search(content)
    if "user-scalable=no" in lowered or (scale is not None and _float(scale.group(1)) < 5):
        return make(
            "viewport",
            "Viewport disables zooming",
            "warn",
            content,
            "user-scalable=no or maximum-scale below 5 stops users from zooming.",
            "Remove user-scalable=no and maximum-scale.",
        )
    return make("viewport", "Has a mobile viewport", "pass", content, "width=device-width is set.")


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def check_charset(site: Site) -> Check:
    page = site.page
    header = header_charset(page.header("content-type"))
    meta = meta_charset(page.body, 1024)
    bom = bom_charset(page.body)
    value = {"header": header, "meta": meta, "bom": bom, "decodedAs": page.encoding}
    if header or meta or bom:
        where = ", ".join(k for k in ("header", "meta", "bom") if value[k])
        return make(
            "charset",
            "Charset is declared",
            "pass",
            value,
            f"Declared in: {where}; decoded as {page.encoding}.",
        )
    late = meta_charset(page.body, 65536)
    detail = "No charset in the Content-Type header, no BOM"
    detail += (
        f", and <meta charset={late}> comes after the first 1024 bytes."
        if late
        else (", and no <meta charset> in the first 1024 bytes.")
    )
    return make(
        "charset",
        "Charset is not declared properly",
        "warn",
        value,
        detail,
        'Send "Content-Type: text/html; charset=utf-8" or put <meta charset="utf-8"> '
        "first in the <head>.",
    )


def check_doctype(site: Site) -> Check:
    if site.page.has_doctype:
        return make("doctype", "Page has the HTML doctype", "pass", True, "<!DOCTYPE html> found.")
    return make(
        "doctype",
        "Page lacks the HTML doctype",
        "warn",
        False,
        "Without <!DOCTYPE html> browsers render in quirks mode.",
        "Start the document with <!DOCTYPE html>.",
    )


def check_meta_keywords(site: Site) -> Check | None:
    keywords = site.page.meta("keywords")
    if keywords is None:
        return None
    return make(
        "meta-keywords",
        "Meta keywords present",
        "info",
        keywords,
        "Google and Bing ignore meta keywords; some tools treat them as a spam signal.",
        "You can remove the keywords meta tag.",
    )


def _outside_head(page: Page) -> bool:
    """True when some <title>, <meta> or <link> is not in <head> (the cheap test first)."""
    head = page.head
    in_head = {n.mem_id for n in head.css("title, meta, link")} if head is not None else set()
    tags = (page.elements("title"), page.metas, page.elements("link"))
    return any(node.mem_id not in in_head for nodes in tags for node in nodes)


def check_head_in_body(site: Site) -> Check | None:
    body = site.page.tree.body
    if body is None or not _outside_head(site.page):
        return None
    misplaced = [
        (node.tag or "") + (f"[{key}]" if (key := _key_of(node.attributes)) else "")
        for node in body.css(
            "title, meta[name], meta[property], meta[charset], link[rel=canonical]"
        )
    ]
    if not misplaced:
        return None
    return make(
        "head-elements-in-body",
        "Head elements found in <body>",
        "warn",
        misplaced[:20],
        f"{plural(len(misplaced), 'element')} that belong in <head> end up in <body> "
        "(often after an invalid element in <head>); crawlers may ignore them.",
        "Move them into <head> and keep only metadata elements there.",
    )


def _key_of(attributes: dict[str, str | None]) -> str | None:
    return attributes.get("name") or attributes.get("property") or attributes.get("rel")


CONTENT_CHECKS = (
    check_title,
    check_title_length,
    check_single_title,
    check_description,
    check_description_length,
    check_h1,
    check_heading_order,
    check_word_count,
    check_lang,
    check_viewport,
    check_charset,
    check_doctype,
    check_meta_keywords,
    check_head_in_body,
)
