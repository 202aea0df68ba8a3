"""A fetched HTML page parsed once, plus the facts every analyzer reads.

``Page`` is built from a fetch result (or from bytes in tests) and parses the
HTML with selectolax's lexbor engine exactly once. Scripts, styles and
templates are noted (JSON-LD blocks, script count, framework markers) and then
removed from the tree, so that text extraction sees only rendered text.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from charset_normalizer import from_bytes
from selectolax.lexbor import LexborHTMLParser, LexborNode

from toolrun.tools.web.models import RedirectHop

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
    tree: LexborHTMLParser = field(init=False, repr=False)
    json_ld_blocks: list[str] = field(init=False, repr=False)
    script_count: int = field(init=False)
    external_scripts: list[str] = field(init=False, repr=False)
    framework_markers: list[str] = field(init=False)
    noscript_text: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.tree = LexborHTMLParser(self.html)
        # One pass finds every non-rendered element; they are noted, then removed.
        hidden = self.tree.css("script, style, template, noscript")
        self.script_count = 0
        self.json_ld_blocks = []
        self.external_scripts = []
        noscript: list[str] = []
        for node in hidden:
            if node.tag == "script":
                self.script_count += 1
                attrs = node.attributes
                if (attrs.get("type") or "").strip().lower() == "application/ld+json":
                    self.json_ld_blocks.append(node.text(deep=True))
                if attrs.get("src"):
                    self.external_scripts.append(attrs["src"] or "")
            elif node.tag == "noscript":
                noscript.append(node.text(deep=True))
        head_sample = self.html[:200_000]
        self.framework_markers = [
            name for marker, name in _FRAMEWORK_MARKERS if marker in head_sample
        ]
        self.noscript_text = normalize_space(" ".join(noscript))
        for node in reversed(hidden):  # descendants before their ancestors
            node.decompose(recursive=True)

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
        base = self.tree.css_first("base[href]")
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

    def anchor_host(self, anchor: Anchor) -> str | None:
        """The lower-cased host an ``http(s)`` link points to; None for other schemes.

        Paths, queries and fragments are answered without resolving the URL.
        """
        raw = (anchor.raw_href or "").strip()
        if raw[:1] in ("/", "?", "#") and raw[:2] != "//" and self._base_origin == self.origin:
            return self.host
        href = anchor.href
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

    @cached_property
    def metas(self) -> list[LexborNode]:
        return list(self.tree.css("meta"))

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
            for node in self.tree.css("title")
            if not _inside_svg(node)
        ]

    @cached_property
    def title(self) -> str | None:
        head_title = self.head_nodes("title")
        if head_title:
            return normalize_space(head_title[0].text(deep=True)) or None
        return self.titles[0] if self.titles and self.titles[0] else None

    @cached_property
    def words(self) -> list[str]:
        """Whitespace-separated tokens of the visible body text."""
        body = self.tree.body
        return body.text(deep=True, separator=" ").split() if body is not None else []

    @cached_property
    def text(self) -> str:
        """Visible text of the body (scripts, styles, templates and noscript removed)."""
        return " ".join(self.words)

    @cached_property
    def word_count(self) -> int:
        """Whitespace-separated tokens (punctuation-only tokens included: cheap and close)."""
        return len(self.words)

    @cached_property
    def anchors(self) -> list[Anchor]:
        """Every ``<a>`` of the document, in order."""
        resolve = self.resolve
        return [
            Anchor(node, node.attributes, clean_text(node.text(deep=True)), resolve)
            for node in self.tree.css("a")
        ]

    @cached_property
    def images(self) -> list[dict[str, str | None]]:
        """Attributes of every ``<img>``, in order."""
        return [node.attributes for node in self.tree.css("img")]

    @cached_property
    def has_lang_below_root(self) -> bool:
        """True when some element inside <body> sets its own ``lang``."""
        return self.tree.css_first("body [lang]") is not None

    @cached_property
    def heading_nodes(self) -> list[tuple[int, LexborNode]]:
        """(level, node) of every h1-h6 in document order (text read only where needed)."""
        return [
            (int((node.tag or "h1")[1]), node) for node in self.tree.css("h1, h2, h3, h4, h5, h6")
        ]

    @cached_property
    def h1_texts(self) -> list[str]:
        return [
            clean_text(node.text(deep=True)) for level, node in self.heading_nodes if level == 1
        ]

    @cached_property
    def element_count(self) -> int:
        """Tags opened in the source (``<`` not followed by ``/`` or ``!``): the DOM size
        without building a node object per element."""
        html = self.html
        return html.count("<") - html.count("</") - html.count("<!")

    @cached_property
    def has_doctype(self) -> bool:
        start = re.sub(r"^(\s|<!--.*?-->)*", "", self.html[:4096], flags=re.S)
        return start[:9].lower() == "<!doctype"

    def is_html(self) -> bool:
        return self.content_type in HTML_TYPES


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
