"""Fixtures of the domain tool tests: loopback DNS, HTTP(S), RDAP and WHOIS servers."""

from tests.servers.dns import dns_server  # noqa: F401
from tests.servers.http import http_server, https_server, tls_ca  # noqa: F401
from tests.servers.rdap import rdap_servers  # noqa: F401
