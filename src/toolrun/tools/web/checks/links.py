"""Links: Lighthouse's link-text and crawlable-anchors, plus link hygiene.

``link-text`` fails a followable link whose trimmed, lower-cased text equals a
non-descriptive phrase of Lighthouse's lists (the link's language picks the
list; without one every list applies), or whose text is a bare http(s) URL.

The checks share one ``LinkFacts`` per site, computed from the page's anchors
as read once (attributes and text of every ``<a>``): each attribute selector of
the rules is evaluated in Python (``css.py``) on those attributes, so a page
with thousands of links is read once rather than walked once per rule.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from urllib.parse import urlsplit

from selectolax.lexbor import LexborNode

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.css import has_token_ci, starts_with_ci
from toolrun.tools.web.models import Check
from toolrun.tools.web.page import Anchor, Page, clean_text
from toolrun.tools.web.site import Site
from toolrun.tools.web.treewalk import count_netlocs

# Lighthouse core/audits/seo/link-text.js (Apache-2.0), by language.
NON_DESCRIPTIVE: dict[str, frozenset[str]] = {
    "en": frozenset(
        {
            "click here",
            "click this",
            "go",
            "here",
            "information",
            "learn more",
            "more",
            "more info",
            "more information",
            "right here",
            "read more",
            "see more",
            "start",
            "this",
        }
    ),
    "ja": frozenset(
        {"ここをクリック", "こちらをクリック", "リンク", "続きを読む", "続く", "全文表示"}
    ),
    "es": frozenset(
        {
            "click aquí",
            "click aqui",
            "clicka aquí",
            "clicka aqui",
            "pincha aquí",
            "pincha aqui",
            "aquí",
            "aqui",
            "más",
            "mas",
            "más información",
            "más informacion",
            "mas información",
            "mas informacion",
            "este",
            "enlace",
            "este enlace",
            "empezar",
        }
    ),
    "pt": frozenset(
        {"clique aqui", "ir", "mais informação", "mais informações", "mais", "veja mais"}
    ),
    "ko": frozenset(
        {
            "여기",
            "여기를 클릭",
            "클릭",
            "링크",
            "자세히",
            "자세히 보기",
            "계속",
            "이동",
            "전체 보기",
        }
    ),
    "sv": frozenset({"här", "klicka här", "läs mer", "mer", "mer info", "mer information"}),
    "de": frozenset(
        {"klicke hier", "hier klicken", "hier", "mehr", "siehe", "dies", "das", "weiterlesen"}
    ),
    "ta": frozenset(
        {
            "அடுத்த பக்கம்",
            "மறுபக்கம்",
            "முந்தைய பக்கம்",
            "முன்பக்கம்",
            "மேலும் அறிக",
            "மேலும் தகவலுக்கு",
            "மேலும் தரவுகளுக்கு",
            "தயவுசெய்து இங்கே அழுத்தவும்",
            "இங்கே கிளிக் செய்யவும்",
        }
    ),
    "fa": frozenset(
        {
            "اطلاعات بیشتر",
            "اطلاعات",
            "این",
            "اینجا بزنید",
            "اینجا کلیک کنید",
            "اینجا",
            "برو",
            "بیشتر بخوانید",
            "بیشتر بدانید",
            "بیشتر",
            "شروع",
        }
    ),
}
ALL_PHRASES = frozenset().union(*NON_DESCRIPTIVE.values())
_JS_VOID = re.compile(r"javascript:void(\(|)0(\)|)", re.I)
_HREF_ATTRS = ("target", "download", "ping", "rel", "hreflang", "type", "referrerpolicy")
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1", "0.0.0.0"})
_LOOSE = re.compile(r"\s\s|[\n\t\r\xa0]")
_URL_PREFIXES = ("http://", "https://")
# First characters of the hrefs that may be uncrawlable ("" = empty); others always are.
_CRAWL_SUSPECT_STARTS = frozenset({"", " ", "\t", "\n", "\r", "j", "J", "f", "F"})
_JM = frozenset("jJmM")
# Over ``LinkFacts._joined`` (each href after a NUL), ASCII case-insensitive as CSS's [href^=]:
# the hrefs that start with http:, and the netloc (and a "/" after it) of the absolute ones.
_INSECURE = re.compile(r"\0(http:[^\0]*)", re.I | re.A)
_NETLOC = re.compile(r"\0(?:https?:)?//([^/\0]*)(/?)", re.I | re.A)
_ABSOLUTE = re.compile(r"\0((?:https?:)?//[^\0]*)", re.I | re.A)
# An href that starts as one of _CRAWL_SUSPECT_STARTS (an empty one is followed by a NUL).
_SUSPECT = re.compile(r"\0[\0 \t\n\rjJfF]")
_SPACE_BEFORE_NUL = re.compile(r"\s\0")
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))
_TWO_COLONS = re.compile(r":[^\0:]*:")
MAX_LINKS = 300
MAX_PHRASE_CHARS = 64
MAX_LISTED = 50


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def _lang_of(node: LexborNode) -> str | None:
    current: LexborNode | None = node
    while current is not None:
        lang = current.attributes.get("lang") if current.tag != "-document" else None
        if lang:
            return lang.strip().lower()
        current = current.parent
    return None


def _is_full_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in {"http", "https"} and bool(parts.netloc) and " " not in text


def uncrawlable_reason(anchor: Anchor) -> str | None:
    """Lighthouse's crawlable-anchors rule (listeners approximated by ``on*`` attributes)."""
    attrs = anchor.attrs
    href = anchor.raw_href
    if href and href[0] in "/#" and href.isprintable() and " " not in href:
        return None  # the common case: a plain path or fragment is always crawlable
    raw = re.sub(r"\s", "", href or "")
    if (attrs.get("role") or "").strip():
        return None
    if raw.lower().startswith("mailto:"):
        return None
    if raw.lower().startswith("file:"):
        return "file: URL"
    if not raw and ((attrs.get("name") or "").strip() or (attrs.get("id") or "").strip()):
        return None
    if _JS_VOID.search(raw):
        return "javascript:void(0)"
    if anchor.raw_href is None:
        has_listener = any(name.lower().startswith("on") for name in attrs)
        if has_listener and not any(name in attrs for name in _HREF_ATTRS):
            return "no href, click handler only"
        return None
    if raw.lower().startswith("javascript:"):
        return "javascript: URL"
    if anchor.href is None or not anchor.href:
        return "empty href"
    return None


@dataclass
class LinkCounts:
    """Internal and external links and the hygiene problems among them."""

    internal: int = 0
    external: int = 0
    nofollow_internal: int = 0
    insecure: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)


def is_crawl_suspect(attrs: dict[str, str | None]) -> bool:
    """An ``<a>`` that may be uncrawlable: no href, an empty one, ``javascript``, ``file:`` or a
    leading space, tab, newline or CR; every other href is plain and always crawlable."""
    if "href" not in attrs:
        return True
    href = attrs["href"]
    if not href:
        return True
    return (
        href[0] in " \t\n\r" or starts_with_ci(href, "javascript") or starts_with_ci(href, "file:")
    )


def is_text_suspect(attrs: dict[str, str | None]) -> bool:
    """A link Lighthouse's link-text rule can fail: an href, not nofollow, not
    ``javascript:``/``mailto:``, not a bare fragment (same page)."""
    if "href" not in attrs:
        return False
    rel = attrs.get("rel")
    if rel and has_token_ci(rel, "nofollow"):
        return False
    href = attrs["href"] or ""
    first = href[:1]
    if first in ("j", "J", "m", "M"):
        return not (starts_with_ci(href, "javascript:") or starts_with_ci(href, "mailto:"))
    return first != "#"


def _host_of(url: str, scheme: str) -> str:
    """Host of an absolute or scheme-relative URL, lower-cased, without a urlsplit per link:
    the text after the first "//" up to the next "/", less userinfo and port."""
    if url.startswith("//"):
        url = scheme + ":" + url
    start = url.find("/") + 2
    end = url.find("/", start)
    netloc = url[start:end] if end != -1 else url[start:]
    return _netloc_host(netloc)


def _netloc_host(netloc: str) -> str:
    """The lower-cased host of a URL's netloc text, less userinfo and port."""
    if "@" in netloc:
        netloc = netloc.rpartition("@")[2]
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1].lower()
    return netloc.partition(":")[0].lower()


def _phrase_of(text: str) -> str | None:
    """The lower-cased, space-normalised text if it is a listed phrase or a bare URL."""
    low = text.strip().lower()
    if low in ALL_PHRASES or low.startswith(_URL_PREFIXES):
        return low
    if len(low) > MAX_PHRASE_CHARS or _LOOSE.search(low) is None:
        return None
    low = " ".join(low.split())
    return low if low in ALL_PHRASES else None


def _text_verdict(text: str, page_lang: str | None) -> tuple[str, bool] | None:
    """Whether a followable link with this text fails link-text: its phrase, and whether the
    link's own language still decides (only when elements below the root set one)."""
    low = _phrase_of(text)
    if low is None:
        return None
    if low.startswith(_URL_PREFIXES) and _is_full_url(text.strip()):
        return low, False
    if low not in ALL_PHRASES:
        return None
    if page_lang is None:
        return low, True
    return (low, False) if _listed_for(low, page_lang) else None


def _listed_for(phrase: str, lang: str | None) -> bool:
    """Whether ``phrase`` is non-descriptive in ``lang`` (every list applies without one)."""
    return not lang or phrase in NON_DESCRIPTIVE.get(lang.split("-")[0], frozenset())


def _is_absolute(href: str) -> bool:
    """Not a relative link: it names a scheme (holds a ":") or a host ("//")."""
    return ":" in href or href[:2] == "//"


def _all_leave_the_page(hrefs: list[str | None], rels: list[str | None], page_path: str) -> bool:
    """Whether each of these links (on a page whose relative links resolve on its own
    origin) is followable and leads off the page, decided for all at once: each has an href
    that starts with one "/" and no whitespace at its end, none a rel, and none is the page's
    own path (with or without a fragment). False means "look at each"."""
    if None in hrefs or any(rels):
        return False
    joined = "\0" + "\0".join(hrefs) + "\0"  # type: ignore[arg-type]
    return (
        joined.count("\0") == len(hrefs) + 1
        and joined.count("\0/") == len(hrefs)
        and "\0//" not in joined
        and _SPACE_BEFORE_NUL.search(joined) is None
        and f"\0{page_path}\0" not in joined
        and f"\0{page_path}#" not in joined
    )


def phrase_candidates(texts: list[str]) -> list[int]:
    """Indices of the texts ``_phrase_of`` may accept: a superset, with cheap tests first. A
    text needs normalising only if it holds two spaces in a row or other whitespace, and all
    other whitespace is unprintable. Each distinct text is judged once, and in C (set and
    string operations) unless some text needs normalising or may be a URL."""
    distinct = list(dict.fromkeys(texts))
    keys = list(map(str.lower, map(str.strip, distinct)))
    # Keys are stripped: two spaces in a row come from a key (or an empty one) only.
    spaced = " ".join(keys)
    if "  " in spaced or not _is_printable(spaced) or "http" in spaced:
        wanted = set(compress(distinct, map(_is_candidate_key, keys)))
    else:
        phrases = ALL_PHRASES.intersection(keys)
        wanted = set(compress(distinct, map(phrases.__contains__, keys))) if phrases else set()
    if not wanted:
        return []
    return list(compress(range(len(texts)), map(wanted.__contains__, texts)))


def _is_printable(text: str) -> bool:
    """``text.isprintable()``; for ASCII text by deleting the printable bytes (in C, without a
    Unicode table lookup per character)."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _PRINTABLE_ASCII)
    return text.isprintable()


def _is_candidate_key(key: str) -> bool:
    return (
        key in ALL_PHRASES
        or key[:4] == "http"
        or ((not key.isprintable() or "  " in key) and len(key) <= MAX_PHRASE_CHARS)
    )


class LinkFacts:
    """The link facts of a page, each computed on first use from one list of its anchors."""

    def __init__(self, page: Page) -> None:
        self.page = page

    @property
    def total(self) -> int:
        return len(self.page.anchor_texts)

    @property
    def hrefs(self) -> list[str | None]:
        """Each anchor's href as CSS sees it: None without one, "" when empty or valueless."""
        return self.page.anchor_hrefs

    @cached_property
    def present(self) -> list[str]:
        """The hrefs of the anchors that have one, in order."""
        return [href for href in self.hrefs if href is not None]

    @cached_property
    def _joined(self) -> str | None:
        """``present`` with a NUL before and after each href, so that tests on the starts of
        all of them are one substring search; None if an href holds a NUL itself (the parser
        replaces them, so this is a guard)."""
        joined = "\0" + "\0".join(self.present) + "\0"
        return joined if joined.count("\0") == len(self.present) + 1 else None

    @cached_property
    def non_descriptive(self) -> tuple[int, list[dict[str, str | None]]]:
        """Lighthouse's link-text rule over the page: the count and the first ``MAX_LISTED``."""
        page = self.page
        texts = page.anchor_texts
        candidates = phrase_candidates(texts)
        if not candidates:
            return 0, []
        page_lang = None if page.has_lang_below_root else (page.lang or "").strip().lower()
        # Pages repeat link texts ("read more" under every teaser): judge each text once.
        candidate_texts = list(map(texts.__getitem__, candidates))
        verdicts = {text: _text_verdict(text, page_lang) for text in dict.fromkeys(candidate_texts)}
        candidates = list(compress(candidates, map(verdicts.__getitem__, candidate_texts)))
        hrefs, rels = self.hrefs, page.anchor_rels
        if page.base_is_origin and not any(verdict[1] for verdict in verdicts.values() if verdict):
            found = list(map(hrefs.__getitem__, candidates))
            if _all_leave_the_page(found, list(map(rels.__getitem__, candidates)), self._path):
                return len(found), [
                    {"href": page.resolve((href or "").strip()), "text": clean_text(texts[index])}
                    for href, index in zip(found[:MAX_LISTED], candidates, strict=False)
                ]
        failures = 0
        failing: list[dict[str, str | None]] = []
        for index in candidates:
            raw = self.followed_off_page(hrefs[index], rels[index])
            if raw is None:
                continue
            low, needs_lang = verdicts[texts[index]] or ("", False)  # (each has a verdict)
            if needs_lang and not _listed_for(low, _lang_of(page.anchor_nodes[index])):
                continue
            failures += 1
            if len(failing) < MAX_LISTED:
                failing.append({"href": page.resolve(raw), "text": clean_text(texts[index])})
        return failures, failing

    def followed_off_page(self, href: str | None, rel: str | None) -> str | None:
        """The trimmed href of a link a crawler follows (is_text_suspect) off this page;
        None for a link without an href, a nofollow, fragment, javascript: or mailto: one,
        or one back to the page itself."""
        if href is None or (rel and has_token_ci(rel, "nofollow")):
            return None
        first = href[:1]
        if first == "#" or (
            first in _JM
            and (starts_with_ci(href, "javascript:") or starts_with_ci(href, "mailto:"))
        ):
            return None
        raw = href.strip()
        if self.page.base_is_origin and raw[:1] == "/" and raw[:2] != "//":
            return None if raw.partition("#")[0] == self._path else raw
        resolved = self.page.resolve(raw)
        return None if not resolved or _without_fragment(resolved) == self._key else raw

    @cached_property
    def _key(self) -> str:
        """The page's URL without its fragment."""
        return _without_fragment(self.page.final_url)

    @cached_property
    def _path(self) -> str:
        """The page's path and query (what a same-origin relative link to it spells)."""
        return self._key[len(self.page.origin) :] or "/"

    @cached_property
    def uncrawlable(self) -> list[dict[str, str | None]]:
        """Lighthouse's crawlable-anchors failures, in document order."""
        page = self.page
        found: list[dict[str, str | None]] = []
        joined = self._joined
        if len(self.present) == self.total and joined is not None and not _SUSPECT.search(joined):
            return found
        for index, href in enumerate(self.hrefs):
            if href is not None and href[:1] not in _CRAWL_SUSPECT_STARTS:
                continue  # a plain path, fragment or URL: always crawlable
            attrs = page.anchor_attrs[index]
            if not is_crawl_suspect(attrs):
                continue
            text = clean_text(page.anchor_texts[index])
            anchor = Anchor(page.anchor_nodes[index], attrs, text, page.resolve)
            reason = uncrawlable_reason(anchor)
            if reason:
                found.append({"href": anchor.raw_href, "text": anchor.text[:80], "reason": reason})
        return found

    @cached_property
    def counts(self) -> LinkCounts:
        page = self.page
        counts = LinkCounts()
        if page.base_is_origin:
            insecure = self._count_hrefs(counts)
        else:  # <base href> elsewhere: resolve every link
            for anchor in page.anchors:
                _tally(counts, page.link_host(anchor.raw_href), page.host, anchor)
            insecure = [href for href in self.hrefs if href and href[:5].lower() == "http:"]
        if page.final_url.startswith("https:"):
            counts.insecure = [page.resolve(href) or "" for href in insecure]
        return counts

    def _absolute_count(self, joined: str) -> int:
        """How many present hrefs hold a ":" or start with "//": counted as the colons of
        ``joined`` when no href holds two and none starts with "//", else one by one."""
        if "\0//" not in joined and _TWO_COLONS.search(joined) is None:
            return joined.count(":")
        return sum(map(_is_absolute, self.present))

    def _count_hrefs(self, counts: LinkCounts) -> list[str]:
        """Relative links are internal, absolute ones by host, nofollow ones resolved; returns
        the hrefs that start with ``http:``."""
        page = self.page
        host = page.host
        # Relative links (no ":", not "//") are internal.
        joined = self._joined
        if joined is None:
            rest = list(filter(_is_absolute, self.present))
            relative = len(self.present) - len(rest)
            insecure = _tally_hrefs(counts, rest, host, page.final_url.split(":", 1)[0])
        else:
            relative = len(self.present) - self._absolute_count(joined)
            # Lower-cased, "\0http:" is in every text the case-insensitive pattern matches.
            insecure = _INSECURE.findall(joined) if "\0http:" in joined.lower() else []
            # A host per distinct netloc (trailing space is stripped only where no "/" follows,
            # as ``_host_of`` strips the whole href); most links share a few hosts.
            counted = count_netlocs(joined)
            netlocs = Counter(_NETLOC.findall(joined)) if counted is None else counted
            host_of = {key: _netloc_host(key[0] if key[1] else key[0].rstrip()) for key in netlocs}
            counts.internal = sum(n for key, n in netlocs.items() if host_of[key] == host)
            counts.external = sum(netlocs.values()) - counts.internal
            if not _LOCAL_HOSTS.isdisjoint(host_of.values()):
                hosts = list(map(host_of.__getitem__, _NETLOC.findall(joined)))
                counts.local = [
                    href.strip()
                    for href, link_host in zip(_ABSOLUTE.findall(joined), hosts, strict=True)
                    if link_host != host and link_host in _LOCAL_HOSTS
                ]
        counts.internal += relative
        hrefs, rels = self.hrefs, page.anchor_rels
        # Only a non-empty rel can hold nofollow (and only a link with an href counts).
        for index in compress(range(len(rels)), rels) if any(rels) else ():
            rel = rels[index]
            if hrefs[index] is not None and rel and has_token_ci(rel, "nofollow"):
                counts.nofollow_internal += page.link_host(hrefs[index]) == host
        return insecure


def _tally_hrefs(counts: LinkCounts, rest: list[str], host: str, scheme: str) -> list[str]:
    """Count the absolute links among ``rest`` (each with a ":" or starting with "//") by host
    into ``counts``; returns those that start with ``http:``."""
    insecure = []
    for href in rest:
        # CSS's ASCII case-insensitive prefix match: no other character lower-cases into
        # these prefixes (U+212A becomes "k"; U+0130 becomes two characters).
        head = href[:8].lower()
        if head.startswith("http:"):
            insecure.append(href)
        if href[:2] != "//" and not head.startswith(_URL_PREFIXES):
            continue
        raw = href.strip()
        link_host = _host_of(raw, scheme)
        if link_host == host:
            counts.internal += 1
        else:
            counts.external += 1
            if link_host in _LOCAL_HOSTS:
                counts.local.append(raw)
    return insecure


def _tally(counts: LinkCounts, link_host: str | None, host: str, anchor: Anchor) -> None:
    if link_host is None:
        return
    if link_host == host:
        counts.internal += 1
        counts.nofollow_internal += "nofollow" in anchor.rel
    else:
        counts.external += 1
        if link_host in _LOCAL_HOSTS:
            counts.local.append(anchor.href or "")


def link_facts(site: Site) -> LinkFacts:
    """The site's ``LinkFacts``, shared by every check that reads links."""
    cached = site.extras.get("link_facts")
    if isinstance(cached, LinkFacts):
        return cached
    facts = LinkFacts(site.page)
    site.extras["link_facts"] = facts
    return facts


def check_link_text(site: Site) -> Check | None:
    links = link_facts(site)
    if not links.total:
        return None
    count, failing = links.non_descriptive
    if failing:
        return make(
            "link-text",
            "Links do not have descriptive text",
            "fail",
            failing,
            f"{plural(count, 'link')} with text like "
            f"{failing[0]['text']!r} that says nothing about the target.",
            "Describe the destination in the link text ('pricing plans', not 'click here').",
        )
    return make(
        "link-text",
        "Links have descriptive text",
        "pass",
        links.total,
        f"{plural(links.total, 'link')} checked.",
    )


def check_crawlable_anchors(site: Site) -> Check | None:
    links = link_facts(site)
    if not links.total:
        return None
    bad = links.uncrawlable
    if bad:
        return make(
            "crawlable-anchors",
            "Links are not crawlable",
            "fail",
            bad[:50],
            f"{plural(len(bad), 'link')} cannot be followed by crawlers (e.g. {bad[0]['reason']}).",
            "Use <a href> with a real URL for every navigation link.",
        )
    return make(
        "crawlable-anchors",
        "Links are crawlable",
        "pass",
        links.total,
        "Every link has a resolvable href.",
    )


def check_links(site: Site) -> Check | None:
    counts = link_facts(site).counts
    internal, external, nofollow_internal = (
        counts.internal,
        counts.external,
        counts.nofollow_internal,
    )
    insecure, local = counts.insecure, counts.local
    value = {
        "internal": internal,
        "external": external,
        "nofollowInternal": nofollow_internal,
        "insecure": insecure[:20],
        "localhost": local[:20],
    }
    problems = []
    if internal + external > MAX_LINKS:
        problems.append(f"{internal + external} links (more than {MAX_LINKS})")
    if nofollow_internal:
        problems.append(f"{plural(nofollow_internal, 'internal link')} marked nofollow")
    if insecure:
        problems.append(f"{plural(len(insecure), 'link')} to http:// URLs")
    if local:
        problems.append(f"{plural(len(local), 'link')} to localhost")
    detail = f"{internal} internal and {external} external links."
    if problems:
        return make(
            "links",
            "Link hygiene issues",
            "warn",
            value,
            detail + " " + "; ".join(problems) + ".",
            "Link internally without nofollow, use https:// targets and drop development URLs.",
        )
    return make("links", "Links look healthy", "pass", value, detail)


LINK_CHECKS = (check_link_text, check_crawlable_anchors, check_links)
