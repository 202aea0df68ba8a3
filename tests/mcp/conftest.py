"""Fixtures: the client tests' real ``toolrun serve`` (with a loopback DNS server) and accounts."""

from __future__ import annotations

import pytest

from tests.client.conftest import accounts, api_key, dns, server
from tests.client.server import AccountPool

__all__ = ["accounts", "api_key", "dns", "server"]


@pytest.fixture(scope="session")
def shared_key(accounts: AccountPool) -> str:
    """One account for the tests that never look at its balance or ledger."""
    return accounts.take()
