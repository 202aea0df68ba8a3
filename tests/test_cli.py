"""The operator CLI driven as a subprocess, as an operator would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLRUN = [sys.executable, "-m", "toolrun"]


def run(
    args: list[str], env: dict[str, str], *, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*TOOLRUN, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if ok:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def env(database_url: str, tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    return {**clean, "TOOLRUN_DATA_DIR": str(tmp_path), "TOOLRUN_DATABASE_URL": database_url}


def test_accounts_and_keys_lifecycle(env: dict[str, str]) -> None:
    created = json.loads(run(["accounts", "create", "--name", "acme", "--json"], env).stdout)
    assert set(created) == {"accountId", "keyId", "apiKey"}
    assert created["apiKey"].startswith("trk_")
    account = created["accountId"]

    extra = json.loads(
        run(["keys", "create", account, "--expires-in-days", "7", "--json"], env).stdout
    )
    assert set(extra) == {"keyId", "apiKey"}
    assert extra["apiKey"] != created["apiKey"]

    listed = json.loads(run(["keys", "list", account, "--json"], env).stdout)
    assert [item["keyId"] for item in listed["items"]] == [created["keyId"], extra["keyId"]]
    assert all(created["apiKey"] not in json.dumps(item) for item in listed["items"])
    assert listed["items"][1]["expiresAt"] is not None

    run(["keys", "revoke", extra["keyId"]], env)
    listed = json.loads(run(["keys", "list", account, "--json"], env).stdout)
    assert [item["active"] for item in listed["items"]] == [True, False]

    run(["accounts", "disable", account], env)
    run(["accounts", "enable", account], env)


def test_register_an_anonymous_account(env: dict[str, str]) -> None:
    created = json.loads(run(["accounts", "create", "--anonymous", "--json"], env).stdout)
    run(["accounts", "register", created["accountId"]], env)
    again = run(["accounts", "register", created["accountId"]], env, ok=False)
    assert again.returncode == 1
    assert "already registered" in again.stderr


def test_unknown_ids_and_bad_configuration_fail_with_a_message(env: dict[str, str]) -> None:
    missing = run(["keys", "revoke", "no-such-key"], env, ok=False)
    assert missing.returncode == 1
    assert "not found" in missing.stderr
    bad = run(["migrate"], {**env, "TOOLRUN_RATE_LIMIT_PER_MINUTE": "lots"}, ok=False)
    assert bad.returncode == 1
    assert "TOOLRUN_RATE_LIMIT_PER_MINUTE='lots'" in bad.stderr
    assert "Traceback" not in bad.stderr
