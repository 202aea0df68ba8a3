"""seo-checker's fetches beyond the page: its link targets, hreflang alternates and images.

Every probe goes through the guarded fetcher, at most ``CONCURRENCY`` at a time
for the whole job (link targets queue first, then alternates, then images), each
bounded by ``PROBE_TIMEOUT_S``, and all of them by the probe budget: ``BUDGET_S``
after probing starts and never later than ``DEADLINE_MARGIN_S`` before the job's
deadline. A URL the guard refuses, or one left when the budget runs out, is
recorded as not checked. The results go to ``Site.extras``; the rules that read
them are in ``checks/probed.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from toolrun.net.errors import BlockedAddress, NetError, UnsupportedUrl, format_seconds
from toolrun.net.fetch import Fetcher, FetchResult
from toolrun.net.urls import check_port, parse_url
from toolrun.tools.web.checks.canonical import alternates
from toolrun.tools.web.fetching import looks_like_html
from toolrun.tools.web.imagesize import HEADER_BYTES, sniff
from toolrun.tools.web.page import Page
from toolrun.tools.web.site import Site

CONCURRENCY = 5
PROBE_TIMEOUT_S = 5.0
BUDGET_S = 20.0
DEADLINE_MARGIN_S = 10.0
MIN_PROBE_S = 0.5  # less time than this left: the probe is not started
MAX_LINKS = 20
MAX_ALTERNATES = 10
MAX_IMAGES = 10
FIRST_BYTES = 1024  # the GET that replaces a refused HEAD reads no more
ALTERNATE_MAX_BYTES = 512 * 1024  # hreflang links sit in <head> or the Link header
HEAD_REFUSED = frozenset({405, 501})
IMAGE_ACCEPT = "image/*,*/*;q=0.5"
OUT_OF_TIME = "not probed: the job's time for probes ran out"

LINKS = "link_probes"
ALTERNATES = "hreflang_probes"
IMAGES = "image_probes"


@dataclass(frozen=True)
class Answer:
    """What one probed URL answered (redirects followed), or why there is no answer."""

    url: str
    status_code: int | None = None  # of the final answer
    redirect_status: int | None = None  # the first answer's 3xx when the URL redirected
    location: str | None = None  # where the redirects ended
    content_length: int | None = None  # bytes of the final answer, when known
    error: str | None = None  # a network error: the URL is unreachable
    not_checked: str | None = None  # refused by the guard or out of time: no verdict


@dataclass(frozen=True)
class LinkProbes:
    """The page's distinct link targets and the answers of those probed."""

    targets: int
    answers: list[Answer]


@dataclass(frozen=True)
class AlternateProbe:
    """One hreflang alternate: its answer and the hreflang URLs it lists (None if unread)."""

    hreflang: str
    answer: Answer
    alternates: list[str] | None = None


@dataclass(frozen=True)
class ImageProbe:
    """One image source: its answer and, when read, its intrinsic size."""

    answer: Answer
    type: str | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class ImageProbes:
    """The page's distinct image sources and the probes of those probed."""

    sources: int
    probes: list[ImageProbe]


class Prober:
    """Bounded, guarded requests for one job: ``CONCURRENCY`` slots and a cutoff time."""

    def __init__(
        self, fetcher: Fetcher, cutoff: float, *, timeout_s: float = PROBE_TIMEOUT_S
    ) -> None:
        self._fetcher = fetcher
        self._cutoff = cutoff  # on the event loop's clock
        self._timeout_s = timeout_s
        self._slots = asyncio.Semaphore(CONCURRENCY)

    @classmethod
    def until(cls, fetcher: Fetcher, deadline_at: datetime) -> Prober:
        """A prober whose budget ends ``BUDGET_S`` from now or ``DEADLINE_MARGIN_S`` before
        the job's deadline, whichever comes first."""
        left = (deadline_at - datetime.now(UTC)).total_seconds() - DEADLINE_MARGIN_S
        return cls(fetcher, asyncio.get_running_loop().time() + min(BUDGET_S, left))

    async def head(self, url: str, accept: str | None = None) -> Answer:
        """HEAD ``url``; a GET of the first bytes when HEAD is refused (405, 501)."""

        async def send() -> FetchResult:
            result = await self._fetcher.fetch(url, method="HEAD", accept=accept)
            if result.status_code in HEAD_REFUSED:
                result = await self._fetcher.fetch(
                    url, accept=accept, max_bytes=FIRST_BYTES, truncate=True
                )
            return result

        outcome = await self._bounded(url, send)
        return outcome if isinstance(outcome, Answer) else answer_of(url, outcome)

    async def get(
        self, url: str, max_bytes: int, accept: str | None = None
    ) -> tuple[Answer, FetchResult | None]:
        """GET the first ``max_bytes`` of ``url``: its answer and the response, if any."""

        async def send() -> FetchResult:
            return await self._fetcher.fetch(url, accept=accept, max_bytes=max_bytes, truncate=True)

        outcome = await self._bounded(url, send)
        if isinstance(outcome, Answer):
            return outcome, None
        return answer_of(url, outcome), outcome

    async def _bounded(
        self, url: str, send: Callable[[], Awaitable[FetchResult]]
    ) -> FetchResult | Answer:
        try:
            target = parse_url(url)
        except UnsupportedUrl as error:
            return Answer(url, error=error.message)  # a link that cannot work
        try:
            check_port(target)
        except UnsupportedUrl as error:
            return Answer(url, not_checked=error.message)  # the guard's call, not the link's
        async with self._slots:
            left = self._cutoff - asyncio.get_running_loop().time()
            if left < MIN_PROBE_S:
                return Answer(url, not_checked=OUT_OF_TIME)
            timeout = min(self._timeout_s, left)
            try:
                async with asyncio.timeout(timeout):
                    return await send()
            except TimeoutError:
                if timeout < self._timeout_s:
                    return Answer(url, not_checked=OUT_OF_TIME)
                return Answer(url, error=f"timed out after {format_seconds(timeout)}")
            except BlockedAddress as error:
                return Answer(url, not_checked=error.message)
            except NetError as error:
                return Answer(url, error=error.message)


def answer_of(url: str, result: FetchResult) -> Answer:
    """The ``Answer`` of a fetch of ``url``; its size is ``Content-Length``, else the bytes
    received when the whole body arrived unencoded."""
    length = result.header("content-length")
    if length is not None and length.strip().isdigit():
        size: int | None = int(length)
    elif result.body and not result.truncated and result.header("content-encoding") is None:
        size = result.transfer_bytes
    else:
        size = None
    first = result.redirects[0] if result.redirects else None
    return Answer(
        url,
        status_code=result.status_code,
        redirect_status=first.status_code if first else None,
        location=result.final_url if first else None,
        content_length=size,
    )


def _is_http(url: str) -> bool:
    return url[:8].lower().startswith(("http://", "https://"))


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def _target(url: str) -> str:
    """``url`` as one probe target: scheme and host lower-cased (they are case-insensitive),
    the fragment dropped (never sent)."""
    url = url.split("#", 1)[0]
    scheme, separator, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    return f"{scheme.lower()}{separator}{authority.lower()}{slash}{path}"


def link_targets(page: Page) -> list[str]:
    """The distinct http(s) targets of the page's ``<a href>``, fragments removed, the page
    itself left out: those on the page's host first, then the others, in document order."""
    own = _target(page.final_url)
    found: dict[str, None] = {}
    for href in page.anchor_hrefs:
        url = page.resolve(href)
        if url is not None and _is_http(url):
            found[_target(url)] = None
    found.pop(own, None)
    internal = [url for url in found if _host(url) == page.host]
    external = [url for url in found if _host(url) != page.host]
    return internal + external


def alternate_targets(site: Site) -> list[tuple[str, str]]:
    """(hreflang, URL) of the page's distinct http(s) alternates (resolved), itself left out."""
    own = _target(site.page.final_url)
    found: dict[str, str] = {}
    for code, href in alternates(site):
        url = site.page.resolve(href)
        if url is not None and _is_http(url):
            found.setdefault(_target(url), code)
    found.pop(own, None)
    return [(code, url) for url, code in found.items()]


def image_sources(page: Page) -> list[str]:
    """The distinct http(s) ``<img src>`` URLs of the page, in document order."""
    found = (page.resolve(src) for src in page.image_srcs)
    return list(dict.fromkeys(_target(url) for url in found if url and _is_http(url)))


def sized_sources(page: Page) -> set[str]:
    """Image sources whose ``<img>`` declares a numeric width and height."""
    sized = set()
    for attrs in page.images:
        if declared_size(attrs) is not None:
            url = page.resolve(attrs.get("src"))
            if url:
                sized.add(url.split("#", 1)[0])
    return sized


def declared_size(attrs: dict[str, str | None]) -> tuple[float, float] | None:
    """The ``width`` and ``height`` attributes as positive numbers (None when either is not)."""
    try:
        width = float((attrs.get("width") or "").strip())
        height = float((attrs.get("height") or "").strip())
    except ValueError:
        return None
    return (width, height) if width > 0 and height > 0 else None


async def probe_links(prober: Prober, page: Page) -> LinkProbes:
    targets = link_targets(page)
    answers = await asyncio.gather(*(prober.head(url) for url in targets[:MAX_LINKS]))
    return LinkProbes(targets=len(targets), answers=list(answers))


async def probe_alternate(prober: Prober, code: str, url: str) -> AlternateProbe:
    answer, result = await prober.get(url, ALTERNATE_MAX_BYTES)
    if result is None or not 200 <= result.status_code < 300 or not looks_like_html(result):
        return AlternateProbe(code, answer)
    page = Page.from_fetch(result)
    listed = [page.resolve(href) for _, href in alternates(Site(page=page))]
    return AlternateProbe(code, answer, [url for url in listed if url])


async def probe_alternates(prober: Prober, site: Site) -> list[AlternateProbe]:
    targets = alternate_targets(site)[:MAX_ALTERNATES]
    return list(await asyncio.gather(*(probe_alternate(prober, c, u) for c, u in targets)))


async def probe_image(prober: Prober, url: str, *, read: bool) -> ImageProbe:
    """HEAD the image; when ``read``, GET its first 64 KiB instead, for the size as well."""
    if not read:
        return ImageProbe(await prober.head(url, IMAGE_ACCEPT))
    answer, result = await prober.get(url, HEADER_BYTES, IMAGE_ACCEPT)
    info = sniff(result.body) if result is not None and 200 <= result.status_code < 300 else None
    if info is None:
        return ImageProbe(answer)
    return ImageProbe(answer, info.type, info.width, info.height)


async def probe_images(prober: Prober, page: Page) -> ImageProbes:
    sources = image_sources(page)
    sized = sized_sources(page)
    probes = await asyncio.gather(
        *(probe_image(prober, url, read=url in sized) for url in sources[:MAX_IMAGES])
    )
    return ImageProbes(sources=len(sources), probes=list(probes))


async def probe_site(fetcher: Fetcher, site: Site, deadline_at: datetime) -> None:
    """Probe the page's links, hreflang alternates and images into ``site.extras``."""
    prober = Prober.until(fetcher, deadline_at)
    site.page.index_elements(heading_text_levels=())
    links, alternate_probes, images = await asyncio.gather(
        probe_links(prober, site.page),
        probe_alternates(prober, site),
        probe_images(prober, site.page),
    )
    site.extras.update({LINKS: links, ALTERNATES: alternate_probes, IMAGES: images})
