"""Fixtures: one real ``toolrun serve`` per test process (with a loopback DNS server), accounts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.client.server import AccountPool, Server, running_server
from tests.servers.dns import EXAMPLE_ZONE, DnsServer


@pytest.fixture(scope="session")
def dns() -> Iterator[DnsServer]:
    with DnsServer(EXAMPLE_ZONE) as server:
        yield server


@pytest.fixture(scope="session")
def server(dns: DnsServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("toolrun-mcp")
    with running_server(
        data_dir, rate_limit_per_minute="100000", dns_nameservers=dns.address
    ) as running:
        yield running


@pytest.fixture(scope="session")
def accounts(server: Server) -> Iterator[AccountPool]:
    pool = AccountPool(server)
    yield pool
    pool.close()


@pytest.fixture
def api_key(accounts: AccountPool) -> str:
    """A fresh account (10 credits) per test, so balances are the test's own."""
    return accounts.take()


@pytest.fixture(scope="session")
def shared_key(accounts: AccountPool) -> str:
    """One account for the tests that never look at its balance or ledger."""
    return accounts.take()
