"""A fetched HTML page parsed once, plus the facts every analyzer reads.

``Page`` is built from a fetch result (or from bytes in tests) and parses the
HTML with selectolax's lexbor engine exactly once. Scripts, styles and
templates are noted (JSON-LD blocks, script count, framework markers) and then
removed from the tree, so that text extraction sees only rendered text.

Every fact is computed on first use and kept, so checks share them. Each walk
over the tree costs about as much on a large page wherever it finds little, so
the elements checks read are listed by tag in one walk (``elements``), and the
anchors' attributes and texts are read once for every link rule.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from itertools import compress
from operator import methodcaller
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from charset_normalizer import from_bytes
from selectolax.lexbor import LexborHTMLParser, LexborNode

from toolrun.tools.web.models import RedirectHop
from toolrun.tools.web.treewalk import (
    HEADING_TAGS,
    IMAGE_COLUMNS,
    ImageColumns,
    TreeWalker,
    count_words,
    word_stats,
)

if TYPE_CHECKING:
    from toolrun.net.fetch import FetchResult

SNIFF_MIN_BYTES = 256
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.I)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SPACE = re.compile(r"\s+")
_FRAMEWORK_MARKERS = (
    ("data-reactroot", "React"),
    ("__NEXT_DATA__", "Next.js"),
    ("ng-version", "Angular"),
    ("data-v-", "Vue"),
    ("__NUXT__", "Nuxt"),
    ("data-svelte", "Svelte"),
    ("___gatsby", "Gatsby"),
)
FRAMEWORK_SAMPLE_CHARS = 200_000
# Every marker contains one of these, so a sample without them skips the per-marker searches.
_MARKER_STEMS = ("data-", "__", "ng-version")
LANDMARK_TAGS = ("main", "article", "section", "nav", "aside", "header", "footer")
# The elements the checks read: tag -> the lists (in document order) an element of that tag
# is added to. "subresource" and "field" keep the document order across tags.
_LISTED: dict[str, tuple[str, ...]] = {
    **{tag: (tag,) for tag in ("a", "img", "meta", "title", "base")},
    **{tag: (tag,) for tag in ("summary", "dt", "label", "button", "time")},
    "link": ("link", "subresource"),
    "iframe": ("subresource",),
    "video": ("video", "subresource"),
    "audio": ("audio", "subresource"),
    "source": ("source", "subresource"),
    "form": ("subresource",),
    "input": ("input", "field"),
    "textarea": ("field",),
    "select": ("field",),
}
# Tags the checks only count (or test for): the walk keeps no node of them.
COUNTED_TAGS = (*LANDMARK_TAGS, "ul", "ol", "table")
_DENSE_LISTS = frozenset({"a", "img"})
# The selector that finds one list on its own (headings and counted tags included: for the
# rare caller that needs their nodes).
_SELECTORS = {
    **{
        name: ", ".join(tag for tag, lists in _LISTED.items() if name in lists)
        for name in {name for lists in _LISTED.values() for name in lists}
    },
    "heading": ", ".join(HEADING_TAGS),
    **{tag: tag for tag in COUNTED_TAGS},
}
_WALKER = TreeWalker(_LISTED, COUNTED_TAGS)
_LISTED_NAMES = frozenset(name for names in _LISTED.values() for name in names)
_COUNTED = frozenset(COUNTED_TAGS)
_READ_TAGS = ("a", "img")
_GET_SRC = methodcaller("get", "src")
_BARE_ATTRIBUTE = re.compile(r"\[([a-z][a-z-]*)\]")
ALL_LEVELS = range(1, 7)


def header_charset(content_type_header: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type header value, lower-cased."""
    if not content_type_header:
        return None
    match = _HEADER_CHARSET.search(content_type_header)
    return match.group(1).lower() if match else None


def meta_charset(body: bytes, limit: int = 1024) -> str | None:
    """A charset declared by ``<meta charset>`` or http-equiv within the first ``limit`` bytes."""
    match = _META_CHARSET.search(body[:limit])
    return match.group(1).decode("ascii", "replace").lower() if match else None


def bom_charset(body: bytes) -> str | None:
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    return None


def decode_html(body: bytes, declared: str | None = None) -> tuple[str, str]:
    """Decode HTML bytes: BOM, then the header charset, then ``<meta>``, then UTF-8, then sniffing."""
    candidates = [bom_charset(body), declared, meta_charset(body, 4096), "utf-8"]
    for name in candidates:
        if not name:
            continue
        try:
            return body.decode(name).lstrip("\ufeff"), codecs.lookup(name).name
        except (LookupError, UnicodeDecodeError):
            continue
    # Sniffing needs a sample; for a short body the HTML standard's usual default is windows-1252.
    best = from_bytes(body[:65536]).best() if len(body) >= SNIFF_MIN_BYTES else None
    name = best.encoding if best is not None and best.encoding else "cp1252"
    return body.decode(name, "replace"), codecs.lookup(name).name


def normalize_space(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def find_framework_markers(html: str) -> list[str]:
    """Names of the JavaScript frameworks whose markers occur in the first 200,000 characters."""
    stems = [stem for stem in _MARKER_STEMS if html.find(stem, 0, FRAMEWORK_SAMPLE_CHARS) != -1]
    return [
        name
        for marker, name in _FRAMEWORK_MARKERS
        if any(stem in marker for stem in stems)
        and html.find(marker, 0, FRAMEWORK_SAMPLE_CHARS) != -1
    ]


class Anchor:
    """One ``<a>`` element: raw href, resolved href (computed on first use), text, attributes."""

    __slots__ = ("_href", "_resolve", "attrs", "node", "raw_href", "rel", "text")

    def __init__(
        self,
        node: LexborNode,
        attrs: dict[str, str | None],
        text: str,
        resolve: Callable[[str | None], str | None],
    ) -> None:
        self.node = node
        self.attrs = attrs
        self.raw_href = attrs.get("href")
        self.text = text
        rel = attrs.get("rel")
        self.rel = frozenset(rel.lower().split()) if rel else _NO_REL
        self._resolve = resolve
        self._href: str | bool | None = False

    @property
    def href(self) -> str | None:
        """The absolute URL of the link (None without a usable href)."""
        if self._href is False:
            self._href = self._resolve(self.raw_href) if self.raw_href is not None else None
        return self._href  # type: ignore[return-value]


_NO_REL: frozenset[str] = frozenset()
_LOOSE_SPACE = ("  ", "\n", "\t", "\r", "\xa0")


def clean_text(text: str) -> str:
    """Text with whitespace runs collapsed (fast path when there are none)."""
    text = text.strip()
    return " ".join(text.split()) if any(s in text for s in _LOOSE_SPACE) else text


@dataclass
class Page:
    """One fetched page: fetch facts, decoded HTML and its parsed tree (scripts removed)."""

    url: str
    final_url: str
    status_code: int
    headers: list[tuple[str, str]]
    content_type: str
    body: bytes
    html: str
    encoding: str | None = None
    timing_ms: float = 0.0
    ttfb_ms: float = 0.0
    transfer_bytes: int = 0
    tls: bool = False
    truncated: bool = False
    redirects: list[RedirectHop] = field(default_factory=list)
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        self._parsed = LexborHTMLParser(self.html)

    @cached_property
    def framework_markers(self) -> list[str]:
        """Names of the JavaScript frameworks whose markers the source holds (near its start)."""
        return find_framework_markers(self.html)

    @property
    def tree(self) -> LexborHTMLParser:
        """The parsed document without its scripts, styles, templates and noscript (removed on
        first use, so that ``index_elements`` can find them in its own walk)."""
        if "_hidden_facts" not in self.__dict__:
            self._remove_hidden(self._parsed.css("script, style, template, noscript"))
        return self._parsed

    def _remove_hidden(self, hidden: list[LexborNode]) -> None:
        """Note the non-rendered elements (in document order), then remove them."""
        facts = _Hidden()
        noscript: list[str] = []
        for node in hidden:
            if node.tag == "script":
                facts.script_count += 1
                attrs = node.attributes
                if (attrs.get("type") or "").strip().lower() == "application/ld+json":
                    facts.json_ld_blocks.append(node.text(deep=True))
                if attrs.get("src"):
                    facts.external_scripts.append(attrs["src"] or "")
            elif node.tag == "noscript":
                noscript.append(node.text(deep=True))
        facts.noscript_text = normalize_space(" ".join(noscript))
        for node in reversed(hidden):  # descendants before their ancestors
            node.decompose(recursive=True)
        self.__dict__["_hidden_facts"] = facts

    @property
    def _hidden(self) -> _Hidden:
        self.tree  # noqa: B018 (removing them notes them)
        return self.__dict__["_hidden_facts"]  # type: ignore[no-any-return]

    @property
    def script_count(self) -> int:
        return self._hidden.script_count

    @property
    def json_ld_blocks(self) -> list[str]:
        return self._hidden.json_ld_blocks

    @property
    def external_scripts(self) -> list[str]:
        return self._hidden.external_scripts

    @property
    def noscript_text(self) -> str:
        return self._hidden.noscript_text

    def index_elements(self, heading_text_levels: Iterable[int] = ALL_LEVELS) -> None:
        """List every indexed element now and read the attributes and texts of every link and
        image in the same walk: for checkers that read links, images or headings anyway, so
        that no rarer tag is walked for on its own first. Reading a node while the walk is at
        it costs much less than a second pass over thousands of nodes (memory traffic).
        Headings' texts are read for ``heading_text_levels`` (h1's always); the others'
        only if asked for (``heading_texts``), by a walk for them."""
        if "_index" not in self.__dict__:
            levels = {1, *heading_text_levels}
            self.__dict__["_index"] = self._walk(read=True, heading_text_levels=levels)

    def elements(self, name: str) -> list[LexborNode]:
        """Every element of a listed tag (or of the subresource/field groups), in document
        order. Asking for links or images, which a page may hold thousands of, indexes
        every listed tag in one walk; until then a rarer tag is found by a walk for it alone
        (enough for meta-checker and link-preview). Headings and counted tags are not kept
        by the walk: their nodes come from a walk for them (``heading_levels``,
        ``heading_texts`` and ``count`` answer without)."""
        if name not in _LISTED_NAMES or (
            "_index" not in self.__dict__ and name not in _DENSE_LISTS
        ):
            found = self._walks.get(name)
            if found is None:
                selector = _SELECTORS[name]
                # lexbor's own walk by tag name costs a third of a selector walk.
                walk = self.tree.css if "," in selector else self.tree.tags
                found = self._walks[name] = walk(selector)
            return found
        index = self._index
        found = index.get(name)
        if found is None and name in _READ_TAGS:  # read by ``index_elements``, not kept
            found = index[name] = self.tree.tags(name)
        return found if found is not None else []

    @cached_property
    def _index(self) -> dict[str, list[LexborNode]]:
        return self._walk(read=False)

    def count(self, tag: str) -> int:
        """How many elements of a counted tag (``COUNTED_TAGS``) the page has."""
        counts: dict[str, int] = self._walked("_tag_counts")
        return counts[tag]

    def _walked(self, name: str) -> Any:
        """A fact the element walk sets (``_walk``), walking first if no walk ran yet."""
        self._index  # noqa: B018 (the walk, whichever ran, sets it)
        return self.__dict__[name]

    def _walk(
        self, *, read: bool, heading_text_levels: Iterable[int] = ALL_LEVELS
    ) -> dict[str, list[LexborNode]]:
        """The element index in one walk (in C: ``treewalk``); also sets the heading levels and
        texts, the tag counts, the DOM size, the attribute names and the body's text, and,
        with ``read``, the ``anchor_*`` lists and ``images``. Links and images read here are
        not listed: thousands of kept node objects cost allocations and garbage-collector
        passes, and the few checks that need a link's node get them by a walk for the tag."""
        lists: dict[str, list[LexborNode]] = {name: [] for name in _LISTED_NAMES}
        if read:
            for name in _READ_TAGS:
                del lists[name]
        # If the hidden elements are still in the tree, this walk finds them too (saving a
        # selector walk, which costs about as much), does not index what they hold, and
        # removes them after.
        hidden = "_hidden_facts" not in self.__dict__
        root = self._parsed.root
        if root is None:  # lexbor always builds <html>; a guard for the types
            if hidden:
                self._remove_hidden([])
            self.__dict__.update(
                heading_levels=[],
                _heading_texts=[],
                element_count=0,
                _tag_counts=dict.fromkeys(COUNTED_TAGS, 0),
            )
            return lists
        # Links' attribute dicts are rarely read (most rules need the href, rel and text):
        # ``anchor_attrs`` makes them on first use.
        walked = _WALKER.walk(
            root,
            self._parsed.body,
            self._parsed,
            lists,
            read=read,
            hidden=hidden,
            heading_text_levels=heading_text_levels,
        )
        self.__dict__.update(
            body_text=walked.body_text,
            element_count=walked.element_count,
            _tag_counts=_WALKER.counts(walked),
            _attribute_names=walked.attribute_names,
        )
        anchor_texts, heading_texts = walked.anchor_texts, walked.heading_texts
        if hidden:
            self._remove_hidden(walked.hidden)
            if walked.hidden_inside_text:  # a link's or heading's text held a script's
                anchor_texts = [node.text_lexbor() for node in self.elements("a")]
                heading_texts = [node.text_lexbor() for node in self.elements("heading")]
        self.__dict__.update(heading_levels=walked.heading_levels, _heading_texts=heading_texts)
        if read:
            self.__dict__.update(
                anchor_hrefs=walked.anchor_hrefs,
                anchor_rels=walked.anchor_rels,
                anchor_texts=anchor_texts,
                image_columns=walked.image_columns,
                image_srcs=walked.image_srcs,
            )
        return lists

    @cached_property
    def _walks(self) -> dict[str, list[LexborNode]]:
        return {}

    def has(self, selector: str) -> bool:
        """Whether any element matches ``selector``: an indexed tag is looked up, anything
        else is one walk, remembered; an attribute the source never spells needs none."""
        if selector in _COUNTED:
            return self.count(selector) > 0
        if selector in _LISTED.get(selector, ()):
            return bool(self.elements(selector))
        found = self._found.get(selector)
        if found is None:
            attribute = _BARE_ATTRIBUTE.fullmatch(selector)
            found = (
                attribute is None or self.has_attribute(attribute.group(1))
            ) and self.tree.css_first(selector) is not None
            self._found[selector] = found
        return found

    @cached_property
    def _found(self) -> dict[str, bool]:
        return {}

    @classmethod
    def from_fetch(cls, result: FetchResult) -> Page:
        """Build a page from a ``FetchResult`` (its ``text`` is already decoded by the fetcher)."""
        if result.text is not None:
            html, encoding = result.text.lstrip("\ufeff"), result.encoding
        else:
            html, encoding = decode_html(
                result.body, header_charset(_first(result.headers, "content-type"))
            )
        hops = [
            RedirectHop(url=hop.url, status_code=hop.status_code, location=hop.location)
            for hop in result.redirects
        ]
        return cls(
            url=result.url,
            final_url=result.final_url,
            status_code=result.status_code,
            headers=list(result.headers),
            content_type=result.content_type,
            body=result.body,
            html=html,
            encoding=encoding,
            timing_ms=result.timing_ms,
            ttfb_ms=result.ttfb_ms,
            transfer_bytes=result.transfer_bytes,
            tls=result.tls,
            truncated=result.truncated,
            redirects=hops,
        )

    @classmethod
    def from_html(
        cls,
        html: str | bytes,
        url: str = "https://example.test/",
        *,
        status_code: int = 200,
        headers: list[tuple[str, str]] | None = None,
        final_url: str | None = None,
    ) -> Page:
        """A page from literal HTML (tests, benchmarks): no network involved."""
        headers = headers if headers is not None else [("content-type", "text/html; charset=utf-8")]
        body = html if isinstance(html, bytes) else html.encode("utf-8")
        text, encoding = decode_html(body, header_charset(_first(headers, "content-type")))
        return cls(
            url=url,
            final_url=final_url or url,
            status_code=status_code,
            headers=headers,
            content_type="text/html",
            body=body,
            html=text,
            encoding=encoding,
            tls=(final_url or url).startswith("https:"),
            transfer_bytes=len(body),
        )

    # -- headers -------------------------------------------------------------

    def header(self, name: str) -> str | None:
        """The first value of a response header, case-insensitive."""
        return _first(self.headers, name)

    def header_values(self, name: str) -> list[str]:
        name = name.lower()
        return [value for key, value in self.headers if key.lower() == name]

    # -- URLs ----------------------------------------------------------------

    @cached_property
    def base_url(self) -> str:
        """The URL relative references resolve against (``<base href>`` if present)."""
        base = next((node for node in self.elements("base") if "href" in node.attrs), None)
        href = (base.attributes.get("href") or "").strip() if base is not None else ""
        return urljoin(self.final_url, href) if href else self.final_url

    def resolve(self, reference: str | None) -> str | None:
        """An absolute URL for ``reference``; None for empty, ``javascript:`` or unparsable values."""
        if reference is None:
            return None
        cache = self._resolved
        if reference in cache:
            return cache[reference]
        value = self._resolve(reference.strip())
        cache[reference] = value
        return value

    def _resolve(self, reference: str) -> str | None:
        if not reference or reference[:11].lower().startswith(("javascript:", "about:")):
            return None
        # Fast paths for the common shapes; urljoin for everything else.
        if reference.startswith(("https://", "http://")) and " " not in reference:
            return reference
        if reference.startswith("/") and not reference.startswith("//") and "/." not in reference:
            return self._base_origin + reference
        if reference.startswith("#"):
            return self.base_url.split("#", 1)[0] + reference
        try:
            return urljoin(self.base_url, reference)
        except ValueError:
            return None

    @cached_property
    def _resolved(self) -> dict[str, str | None]:
        return {}

    @cached_property
    def _base_origin(self) -> str:
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}"

    def link_host(self, raw_href: str | None) -> str | None:
        """The lower-cased host a link with this ``href`` value points to; None for schemes
        other than ``http(s)``. Paths, queries and fragments are answered without resolving.
        """
        raw = (raw_href or "").strip()
        if raw[:1] in ("/", "?", "#") and raw[:2] != "//" and self._base_origin == self.origin:
            return self.host
        href = self.resolve(raw_href)
        if not href or not href.startswith(("http://", "https://")):
            return None
        netloc = href.split("/", 3)[2].rpartition("@")[2]
        if netloc.startswith("["):
            return netloc[: netloc.find("]") + 1].lower()
        return netloc.partition(":")[0].lower()

    @property
    def base_is_origin(self) -> bool:
        """True when relative links resolve on the page's own origin (no foreign <base>)."""
        return self._base_origin == self.origin

    @cached_property
    def host(self) -> str:
        return (urlsplit(self.final_url).hostname or "").lower()

    @cached_property
    def origin(self) -> str:
        parts = urlsplit(self.final_url)
        return f"{parts.scheme}://{parts.netloc}"

    # -- document facts --------------------------------------------------------

    @cached_property
    def head(self) -> LexborNode | None:
        return self.tree.head

    def head_nodes(self, selector: str) -> list[LexborNode]:
        head = self.head
        return list(head.css(selector)) if head is not None else []

    @property
    def metas(self) -> list[LexborNode]:
        return self.elements("meta")

    @cached_property
    def meta_map(self) -> dict[str, list[str]]:
        """Meta ``content`` (or ``value``) by lower-cased ``name`` / ``property`` key, in order."""
        found: dict[str, list[str]] = {}
        for node in self.metas:
            attrs = node.attributes
            content = attrs.get("content")
            if content is None:
                content = attrs.get("value")
            if content is None:
                continue
            for key_attr in ("name", "property"):
                key = attrs.get(key_attr)
                if key:
                    found.setdefault(key.strip().lower(), []).append(content.strip())
        return found

    def meta(self, *keys: str) -> str | None:
        """The first non-empty content among meta tags named ``keys`` (in priority order)."""
        for key in keys:
            for value in self.meta_map.get(key.lower(), ()):
                if value:
                    return value
        return None

    @cached_property
    def lang(self) -> str | None:
        root = self.tree.css_first("html")
        value = root.attributes.get("lang") if root is not None else None
        return value.strip() if value and value.strip() else None

    @cached_property
    def titles(self) -> list[str]:
        """Document <title> elements (SVG <title> elements are not document titles)."""
        return [
            normalize_space(node.text(deep=True))
            for node in self.elements("title")
            if not _inside_svg(node)
        ]

    @cached_property
    def title(self) -> str | None:
        head_title = self.head_nodes("title")
        if head_title:
            return normalize_space(head_title[0].text(deep=True)) or None
        return self.titles[0] if self.titles and self.titles[0] else None

    @cached_property
    def body_text(self) -> str:
        """Raw text of the body, a space between text nodes (whitespace not yet collapsed); set
        by the element walk if it ran first. A body a frameset displaced is not in the
        document: no text."""
        body = self.tree.body
        if body is None or body.parent is None:
            return ""
        return body.text(deep=True, separator=" ")

    @cached_property
    def words(self) -> list[str]:
        """Whitespace-separated tokens of the visible body text."""
        return self.body_text.split()

    def word_counts(self, limit: int, keep: int) -> tuple[dict[str, int], list[str]]:
        """How many times each of the first ``limit`` words occurs (in first-seen order, as
        ``Counter(words[:limit])``) and the first ``keep`` words: counted in C, each distinct
        word made once, without splitting the whole text."""
        return count_words(self.body_text, limit, keep)

    @cached_property
    def text(self) -> str:
        """Visible text of the body (scripts, styles, templates and noscript removed)."""
        return " ".join(self.words)

    def text_prefix(self, limit: int) -> str:
        """``text[:limit]``, collapsing only as much of the raw text as that takes."""
        raw = self.body_text
        cut = limit + limit // 4
        while cut < len(raw) and "text" not in self.__dict__:
            prefix = " ".join(raw[:cut].split())  # always a start of ``text``
            if len(prefix) >= limit:
                return prefix[:limit]
            cut *= 2
        return self.text[:limit]

    @cached_property
    def _word_stats(self) -> tuple[int, int]:
        return word_stats(self.body_text)

    @property
    def word_count(self) -> int:
        """Whitespace-separated tokens (punctuation-only tokens included: cheap and close):
        ``len(words)``, counted in C without building the list."""
        return self._word_stats[0]

    @property
    def text_length(self) -> int:
        """``len(text)``: the characters of the words and one space between each two."""
        words, spaces = self._word_stats
        return len(self.body_text) - spaces + max(words - 1, 0)

    @property
    def anchor_nodes(self) -> list[LexborNode]:
        """Every ``<a>`` element, in document order."""
        return self.elements("a")

    @cached_property
    def anchor_attrs(self) -> list[dict[str, str | None]]:
        """The attributes of each of ``anchor_nodes``."""
        return [node.attributes for node in self.anchor_nodes]

    @cached_property
    def anchor_hrefs(self) -> list[str | None]:
        """Each anchor's href as CSS sees it: None without one, "" when empty or valueless."""
        return [_css_href(attrs) for attrs in self.anchor_attrs]

    @cached_property
    def anchor_rels(self) -> list[str | None]:
        """Each anchor's ``rel`` (None without one or without a value)."""
        return [attrs.get("rel") for attrs in self.anchor_attrs]

    @cached_property
    def anchor_texts(self) -> list[str]:
        """The text of each of ``anchor_nodes`` (``text_lexbor`` equals ``text(deep=True)``)."""
        return list(map(LexborNode.text_lexbor, self.anchor_nodes))

    @cached_property
    def anchors(self) -> list[Anchor]:
        """Every ``<a>`` of the document, in order."""
        resolve = self.resolve
        return [
            Anchor(node, attrs, clean_text(text), resolve)
            for node, attrs, text in zip(
                self.anchor_nodes, self.anchor_attrs, self.anchor_texts, strict=True
            )
        ]

    @cached_property
    def images(self) -> list[dict[str, str | None]]:
        """Attributes of every ``<img>``, in order (the reading walk keeps only
        ``image_columns``: these are read again when a check needs every attribute)."""
        return [node.attributes for node in self.elements("img")]

    @cached_property
    def image_columns(self) -> ImageColumns:
        """``src``, ``alt``, ``width``, ``height`` and ``style`` of every ``<img>``, one list
        each: the value, None for an attribute without one, False where the image lacks it."""
        images = self.images
        return ImageColumns(
            *([attrs.get(name, False) for attrs in images] for name in IMAGE_COLUMNS)
        )

    @cached_property
    def image_srcs(self) -> list[str | None]:
        """Each image's ``src`` (None without one or without a value)."""
        return list(map(_GET_SRC, self.images))

    @cached_property
    def has_lang_below_root(self) -> bool:
        """True when some element inside <body> sets its own ``lang``."""
        names: frozenset[str] | None = self.__dict__.get("_attribute_names")
        if names is not None:  # the names of the elements below the root
            return "lang" in names and self.tree.css_first("body [lang]") is not None
        spellings = self.attribute_spellings("lang", 2)
        if spellings == 1:  # then no element but the root can hold it
            root = self.tree.root
            if root is not None and "lang" in root.attrs:
                return False
        return bool(spellings) and self.tree.css_first("body [lang]") is not None

    def has_attribute(self, name: str) -> bool:
        """Whether some element has an attribute ``name`` (lower-case, as the parser stores
        names). Exact once the elements are indexed (the walk notes every name); before
        that a gate on the source: False means that no element has it."""
        names: frozenset[str] | None = self.__dict__.get("_attribute_names")
        if names is None:
            return self.attribute_spellings(name) > 0
        root = self.tree.root
        return name in names or (root is not None and name in root.attrs)

    def attribute_spellings(self, name: str, stop: int = 1) -> int:
        """How many times (counting up to ``stop``) the source spells ``name`` where an
        attribute name can start: after whitespace, a quote or a "/" (not in "</name"). An
        attribute is in the tree only if its name is spelled so; 0 means no element has it."""
        source = self.html_lower
        found = 0
        start = source.find(name, 1)  # an attribute name follows something
        while start != -1 and found < stop:
            before = source[start - 1]
            if (before.isspace() or before in "\"'/") and source[start - 2 : start] != "</":
                found += 1
            start = source.find(name, start + 1)
        return found

    @cached_property
    def heading_levels(self) -> list[int]:
        """The level (1-6) of every h1-h6, in document order."""
        levels: list[int] = self._walked("heading_levels")
        return levels

    @cached_property
    def heading_texts(self) -> list[str]:
        """The text of every h1-h6 (``text(deep=True)``, whitespace as written), in order:
        as the walk read them, or from the nodes where it read only some levels."""
        read: list[str | None] = self._walked("_heading_texts")
        if None not in read:
            return read  # type: ignore[return-value]
        return [node.text_lexbor() for node in self.elements("heading")]

    def heading_texts_at(self, levels: Container[int]) -> list[str]:
        """The texts of the headings whose level is one of ``levels``, in order."""
        read: list[str | None] = self._walked("_heading_texts")
        wanted = [level in levels for level in self.heading_levels]
        picked = list(compress(read, wanted))
        if None in picked:  # a level the walk did not read
            picked = list(compress(self.heading_texts, wanted))
        return picked  # type: ignore[return-value]

    @cached_property
    def h1_texts(self) -> list[str]:
        return list(map(clean_text, self.heading_texts_at((1,))))

    @cached_property
    def element_count(self) -> int:
        """The DOM size: elements of the parsed document (html, head and body included,
        whether or not the source spells them), scripts, styles, templates and noscript
        with what they hold left out; counted by the element walk."""
        count: int = self._walked("element_count")
        return count

    @cached_property
    def html_lower(self) -> str:
        """The source lower-cased, for cheap exact gates: a tag or attribute name absent from it
        cannot be in the tree (names come from the source; lower() maps A-Z to a-z)."""
        return self.html.lower()

    @cached_property
    def has_doctype(self) -> bool:
        start = re.sub(r"^(\s|<!--.*?-->)*", "", self.html[:4096], flags=re.S)
        return start[:9].lower() == "<!doctype"

    def is_html(self) -> bool:
        return self.content_type in HTML_TYPES


@dataclass
class _Hidden:
    """What the removed scripts, styles, templates and noscript elements held."""

    script_count: int = 0
    json_ld_blocks: list[str] = field(default_factory=list)
    external_scripts: list[str] = field(default_factory=list)
    noscript_text: str = ""


def _css_href(attrs: dict[str, str | None]) -> str | None:
    return attrs["href"] or "" if "href" in attrs else None


def _inside_svg(node: LexborNode) -> bool:
    current = node.parent
    while current is not None:
        if current.tag == "svg":
            return True
        current = current.parent
    return False


def _first(headers: list[tuple[str, str]], name: str) -> str | None:
    name = name.lower()
    for key, value in headers:
        if key.lower() == name:
            return value
    return None
