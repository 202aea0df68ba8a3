"""RDAP (RFC 9224 bootstrap, RFC 9083 responses) through the guarded fetcher.

The bootstrap maps TLDs to RDAP base URLs: a snapshot of IANA's ``dns.json`` ships
in ``toolrun.data``; ``TOOLRUN_RDAP_BOOTSTRAP_URL`` replaces it (fetched once and
kept for ``BOOTSTRAP_TTL_S``). ``OVERRIDES`` serves TLDs whose registries run RDAP
but are missing from IANA's file. Lookups take the longest label match, prefer
https base URLs, and append ``domain/<name>`` to a base URL ending in ``/``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

from toolrun.config import Settings
from toolrun.net.errors import BadResponse
from toolrun.net.fetch import Fetcher

RDAP_ACCEPT = "application/rdap+json, application/json;q=0.9"
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
BOOTSTRAP_TTL_S = 24 * 3600

OVERRIDES: dict[str, list[str]] = {
    "de": ["https://rdap.denic.de/"],
    "edu": ["https://rdap.educause.edu/"],
}
"""TLDs missing from IANA's file whose registries answer RDAP (used only when the file lacks them)."""

_cache: dict[str, tuple[float, Bootstrap]] = {}


@dataclass(frozen=True)
class Bootstrap:
    """TLD (or multi-label suffix) -> RDAP base URLs, and where the table came from."""

    services: dict[str, list[str]]
    publication: str | None
    source: str

    @classmethod
    def from_json(cls, document: Any, source: str) -> Bootstrap:
        """Read an RFC 9224 document; raises BadResponse when it is not one."""
        if not isinstance(document, dict) or not isinstance(document.get("services"), list):
            raise BadResponse("the RDAP bootstrap file has no services list")
        services: dict[str, list[str]] = {}
        for entry in document["services"]:
            if not (isinstance(entry, list) and len(entry) == 2):
                continue
            labels, urls = entry
            if not isinstance(labels, list) or not isinstance(urls, list):
                continue
            clean = [
                u for u in urls if isinstance(u, str) and u.startswith(("https://", "http://"))
            ]
            for label in labels:
                if isinstance(label, str) and clean:
                    services.setdefault(label.lower().strip("."), []).extend(clean)
        publication = document.get("publication")
        return cls(services, publication if isinstance(publication, str) else None, source)

    def base_urls(self, name: str) -> tuple[list[str], bool]:
        """Base URLs for ``name`` (longest suffix match), https first; and whether an override served it."""
        labels = name.lower().strip(".").split(".")
        for start in range(len(labels)):
            suffix = ".".join(labels[start:])
            if suffix in self.services:
                return _https_first(self.services[suffix]), False
        if labels[-1] in OVERRIDES:
            return _https_first(OVERRIDES[labels[-1]]), True
        return [], False


def _https_first(urls: list[str]) -> list[str]:
    unique = list(dict.fromkeys(urls))
    return sorted(unique, key=lambda u: not u.startswith("https://"))


def bundled_bootstrap() -> Bootstrap:
    """The IANA ``dns.json`` snapshot shipped with toolrun."""
    text = resources.files("toolrun.data").joinpath("dns.json").read_text("utf-8")
    return Bootstrap.from_json(json.loads(text), "bundled IANA dns.json")


async def load_bootstrap(settings: Settings, fetcher: Fetcher) -> Bootstrap:
    """The bootstrap in use: ``settings.rdap_bootstrap_url`` (cached) or the bundled one."""
    url = settings.rdap_bootstrap_url
    if not url:
        return bundled_bootstrap()
    cached = _cache.get(url)
    if cached is not None and time.monotonic() - cached[0] < BOOTSTRAP_TTL_S:
        return cached[1]
    result = await fetcher.fetch(url, max_bytes=MAX_RESPONSE_BYTES, accept="application/json")
    if result.status_code != 200:
        raise BadResponse(f"the RDAP bootstrap file answered HTTP {result.status_code}")
    bootstrap = Bootstrap.from_json(_json(result.body, "the RDAP bootstrap file"), url)
    _cache[url] = (time.monotonic(), bootstrap)
    return bootstrap


def domain_url(base: str, name: str) -> str:
    """``<base>/domain/<name>`` with exactly one slash between."""
    return base.rstrip("/") + "/domain/" + name


@dataclass(frozen=True)
class RdapResponse:
    """One RDAP answer: the URL asked, the HTTP status, and the JSON (None unless 200)."""

    url: str
    status_code: int
    data: dict[str, Any] | None


async def get(fetcher: Fetcher, url: str) -> RdapResponse:
    """GET an RDAP URL; 200 must carry a JSON object (else BadResponse)."""
    result = await fetcher.fetch(url, max_bytes=MAX_RESPONSE_BYTES, accept=RDAP_ACCEPT)
    if result.status_code != 200:
        return RdapResponse(result.final_url, result.status_code, None)
    data = _json(result.body, f"the RDAP answer from {url}")
    if not isinstance(data, dict):
        raise BadResponse(f"the RDAP answer from {url} is not a JSON object")
    return RdapResponse(result.final_url, 200, data)


def _json(body: bytes, what: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise BadResponse(f"{what} is not valid JSON") from None
