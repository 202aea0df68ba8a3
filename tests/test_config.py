from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import ConfigError, load_settings


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TOOLRUN_RATE_LIMIT_PER_MINUTE", "ten"),
        ("TOOLRUN_RATE_LIMIT_PER_MINUTE", "0"),
        ("TOOLRUN_JOB_TIMEOUT_S", "-1"),
        ("TOOLRUN_ALLOW_PRIVATE_NETWORKS", "perhaps"),
        ("TOOLRUN_DATABASE_URL", "mysql://root@localhost/x"),
        ("TOOLRUN_STORAGE_URL", "ftp://files"),
        ("TOOLRUN_WHOIS_PORT", "70000"),
    ],
)
def test_a_bad_value_names_the_variable_and_the_value(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as raised:
        load_settings(_env_file=None)
    assert variable in str(raised.value)
    assert repr(value) in str(raised.value)


def test_defaults_and_derived_urls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLRUN_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("TOOLRUN_POLL_AFTER_MS", "100")
    monkeypatch.setenv("TOOLRUN_DNS_NAMESERVERS", "127.0.0.1:5353, 10.0.0.1, [::1]:53")
    monkeypatch.setenv("TOOLRUN_WHOIS_SERVER", "whois.example:4343")
    settings = load_settings(_env_file=None)
    assert settings.resolved_database_url == f"sqlite+aiosqlite:///{tmp_path}/toolrun.db"
    assert settings.resolved_storage_url == f"file://{tmp_path.resolve()}/files"
    assert settings.poll_after_ms == 6000
    assert settings.dns_nameservers == [("127.0.0.1", 5353), ("10.0.0.1", 53), ("::1", 53)]
    assert settings.whois_server == ("whois.example", 4343)
    assert (settings.rate_limit_per_minute, settings.job_timeout_s) == (10, 60)


def test_postgres_url_becomes_asyncpg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRUN_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/x")
    settings = load_settings(_env_file=None)
    assert settings.resolved_database_url == "postgresql+asyncpg://postgres@127.0.0.1:5432/x"
