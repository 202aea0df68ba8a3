"""Delivery: server response time, HTML weight, text compression and DOM size.

Thresholds: TTFB good at 800 ms or less, poor above 1800 ms (web.dev's TTFB
guidance; Lighthouse's own server-response-time target of 100 ms is a lab
figure without network distance). HTML over 512 KiB warns. Compression is
expected above 1400 bytes (Lighthouse's minimum for text compression). DOM
over 1500 elements warns (SEOnaut).
"""

from __future__ import annotations

from toolrun.tools.web.checks import make
from toolrun.tools.web.models import Check, CheckStatus
from toolrun.tools.web.site import Site

TTFB_GOOD_MS = 800
TTFB_POOR_MS = 1800
HTML_WEIGHT_LIMIT = 512 * 1024
COMPRESSION_MIN_BYTES = 1400
DOM_LIMIT = 1500
_COMPRESSIONS = ("gzip", "br", "zstd", "deflate", "compress")


def check_response_time(site: Site) -> Check:
    page = site.page
    ttfb = round(page.ttfb_ms)
    value = {"ttfbMs": ttfb, "totalMs": round(page.timing_ms)}
    if ttfb <= TTFB_GOOD_MS:
        return make(
            "server-response-time",
            "Server responds quickly",
            "pass",
            value,
            f"First byte after {ttfb} ms (good at {TTFB_GOOD_MS} ms or less).",
        )
    status: CheckStatus = "warn" if ttfb <= TTFB_POOR_MS else "fail"
    return make(
        "server-response-time",
        "Server response is slow",
        status,
        value,
        f"First byte after {ttfb} ms (good at {TTFB_GOOD_MS} ms, poor above {TTFB_POOR_MS} ms).",
        "Cache rendered pages, use a CDN, or speed up the server-side work.",
    )


def check_page_weight(site: Site) -> Check:
    page = site.page
    size = len(page.body)
    value = {"htmlBytes": size, "transferBytes": page.transfer_bytes, "truncated": page.truncated}
    if size <= HTML_WEIGHT_LIMIT:
        return make(
            "page-weight",
            "HTML size is reasonable",
            "pass",
            value,
            f"{size / 1024:.1f} KiB of HTML ({page.transfer_bytes / 1024:.1f} KiB transferred).",
        )
    return make(
        "page-weight",
        "HTML document is heavy",
        "warn",
        value,
        f"{size / 1024:.0f} KiB of HTML (more than {HTML_WEIGHT_LIMIT // 1024} KiB).",
        "Move inline data, SVGs and styles out of the HTML; paginate long lists.",
    )


def check_compression(site: Site) -> Check | None:
    page = site.page
    encoding = (page.header("content-encoding") or "").strip().lower()
    if any(name in encoding for name in _COMPRESSIONS):
        return make(
            "text-compression",
            "Text compression is enabled",
            "pass",
            encoding,
            f"The HTML is sent with Content-Encoding: {encoding}.",
        )
    if len(page.body) < COMPRESSION_MIN_BYTES:
        return None
    return make(
        "text-compression",
        "Text compression is not enabled",
        "warn",
        encoding or None,
        f"{len(page.body) / 1024:.1f} KiB of HTML sent uncompressed.",
        "Enable gzip, Brotli or zstd for text/html responses.",
    )


def check_dom_size(site: Site) -> Check:
    count = site.page.element_count
    if count <= DOM_LIMIT:
        return make("dom-size", "DOM size is reasonable", "pass", count, f"{count} elements.")
    return make(
        "dom-size",
        "Excessive DOM size",
        "warn",
        count,
        f"{count} elements (more than {DOM_LIMIT}).",
        "Render less markup: paginate, virtualise long lists, simplify wrappers.",
    )


PERFORMANCE_CHECKS = (check_response_time, check_page_weight, check_compression, check_dom_size)
