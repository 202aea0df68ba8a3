"""RDAP over HTTP on loopback for tests: a bootstrap file, a registry and a registrar.

One ``HttpServer`` serves ``/bootstrap/dns.json`` (RFC 9224), ``/registry/domain/<name>``
and ``/registrar/domain/<name>`` (RFC 9083 objects, ``application/rdap+json``);
unknown names answer 404 as registries do. Object texts may hold ``{registry}`` and
``{registrar}``, replaced by the base URLs, so ``related`` links point back here::

    with RdapServers() as rdap:
        rdap.bootstrap({"com": rdap.registry_base})
        rdap.add("registry", "example.com", text)
        settings = Settings(rdap_bootstrap_url=rdap.bootstrap_url, allow_private_networks=True)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any

import pytest

from tests.servers.http import HttpServer, Response

RDAP_JSON = [("Content-Type", "application/rdap+json")]


class RdapServers:
    """Bootstrap, registry and registrar RDAP services on one loopback HTTP server."""

    def __init__(self) -> None:
        self.http = HttpServer()

    def start(self) -> RdapServers:
        self.http.start()
        return self

    def stop(self) -> None:
        self.http.stop()

    def __enter__(self) -> RdapServers:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def bootstrap_url(self) -> str:
        return self.http.url("/bootstrap/dns.json")

    @property
    def registry_base(self) -> str:
        return self.http.url("/registry/")

    @property
    def registrar_base(self) -> str:
        return self.http.url("/registrar/")

    def requests(self, prefix: str = "/") -> list[str]:
        """Paths asked so far that start with ``prefix``."""
        return [r.path for r in self.http.requests if r.path.startswith(prefix)]

    def bootstrap(self, services: Mapping[str, str | list[str]]) -> None:
        """Serve a dns.json mapping each TLD to its base URL(s)."""
        document = {
            "version": "1.0",
            "publication": "2026-11-18T20:00:01Z",
            "description": "RDAP bootstrap file for Domain Name System registrations",
            "services": [
                [[label], urls if isinstance(urls, list) else [urls]]
                for label, urls in services.items()
            ],
        }
        self.http.route(
            "/bootstrap/dns.json",
            body=json.dumps(document).encode(),
            headers=[("Content-Type", "application/json")],
        )

    def fill(self, text: str) -> str:
        return text.replace("{registry}", self.registry_base).replace(
            "{registrar}", self.registrar_base
        )

    def add(
        self,
        role: str,
        name: str,
        body: str | Mapping[str, Any],
        *,
        status: int = 200,
        content_type: str = "application/rdap+json",
    ) -> None:
        """Answer ``/<role>/domain/<name>`` with ``body`` (placeholders filled)."""
        text = body if isinstance(body, str) else json.dumps(body)
        self.http.route(
            f"/{role}/domain/{name}",
            Response(
                status=status,
                body=self.fill(text).encode("utf-8"),
                headers=[("Content-Type", content_type)],
            ),
        )


@pytest.fixture
def rdap_servers() -> Iterator[RdapServers]:
    """Started RDAP services (nothing served until the test adds it)."""
    with RdapServers() as servers:
        yield servers
