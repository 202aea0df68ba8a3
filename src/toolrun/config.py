"""Settings from ``TOOLRUN_*`` environment variables (and a ``.env`` file).

Built once at start-up and passed down; nothing else in the package reads the
environment. A bad value stops start-up with a message naming the variable and
the value it had.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

ENV_PREFIX = "TOOLRUN_"
MIN_POLL_AFTER_MS = 6000


class ConfigError(Exception):
    """A configuration variable has a value toolrun cannot use."""


def _parse_host_port(value: str, default_port: int) -> tuple[str, int]:
    value = value.strip()
    if value.startswith("["):  # [v6]:port
        host, _, rest = value[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else default_port
        return host, port
    if value.count(":") == 1:
        host, port_text = value.split(":")
        return host, int(port_text)
    return value, default_port


class Settings(BaseSettings):
    """Every variable of DESIGN §4, with its default."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        validate_default=True,
    )

    data_dir: Path = Path("./toolrun-data")
    database_url: str = ""
    storage_url: str = ""
    s3_endpoint_url: str | None = None
    public_base_url: str = ""
    rate_limit_per_minute: Annotated[int, Field(ge=1)] = 10
    poll_after_ms: int = MIN_POLL_AFTER_MS
    signup_credits: Annotated[int, Field(ge=0)] = 10
    daily_checkin_credits: Annotated[int, Field(ge=0)] = 10
    anonymous_credits: Annotated[int, Field(ge=0)] = 3
    job_timeout_s: Annotated[float, Field(gt=0)] = 60
    job_workers: Annotated[int, Field(ge=0)] = 4
    job_lease_s: Annotated[float, Field(gt=0)] = 15
    job_poll_interval_s: Annotated[float, Field(gt=0)] = 1.0
    job_wakeup: Literal["notify", "poll"] = "notify"
    max_upload_bytes: Annotated[int, Field(ge=1)] = 64 * 1024 * 1024
    upload_ttl_s: Annotated[int, Field(ge=1)] = 86400
    max_image_pixels: Annotated[int, Field(ge=1)] = 100_000_000
    allow_private_networks: bool = False
    dns_nameservers: Annotated[list[tuple[str, int]], NoDecode, Field(default_factory=list)]
    whois_server: Annotated[tuple[str, int], NoDecode] = ("whois.iana.org", 43)
    whois_port: Annotated[int, Field(ge=1, le=65535)] = 43
    rdap_bootstrap_url: str | None = None
    http_timeout_s: Annotated[float, Field(gt=0)] = 15
    log_level: str = "INFO"

    @field_validator("poll_after_ms")
    @classmethod
    def _raise_poll_floor(cls, value: int) -> int:
        return max(value, MIN_POLL_AFTER_MS)

    @field_validator("dns_nameservers", mode="before")
    @classmethod
    def _parse_nameservers(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return [_parse_host_port(item, 53) for item in value.split(",") if item.strip()]
            except ValueError:
                raise ValueError("expected ip[:port],... with numeric ports") from None
        return value

    @field_validator("whois_server", mode="before")
    @classmethod
    def _parse_whois_server(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return _parse_host_port(value, 43)
            except ValueError:
                raise ValueError("expected host[:port] with a numeric port") from None
        return value

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str) -> str:
        if value and not value.startswith(("sqlite", "postgresql", "postgres://")):
            raise ValueError("must start with sqlite:// or postgresql://")
        return value

    @field_validator("storage_url")
    @classmethod
    def _check_storage_url(cls, value: str) -> str:
        if value and not value.startswith(("file://", "s3://")):
            raise ValueError("must start with file:// or s3://")
        return value

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, value: str) -> str:
        if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
        return value.upper()

    @property
    def resolved_database_url(self) -> str:
        """The SQLAlchemy async URL: the default SQLite file, or the configured server."""
        url = self.database_url or f"sqlite:///{self.data_dir / 'toolrun.db'}"
        if url.startswith("postgres://"):
            url = "postgresql://" + url.removeprefix("postgres://")
        if url.startswith("postgresql://"):
            return "postgresql+asyncpg://" + url.removeprefix("postgresql://")
        if url.startswith("sqlite:///"):
            return "sqlite+aiosqlite:///" + url.removeprefix("sqlite:///")
        return url

    @property
    def resolved_storage_url(self) -> str:
        return self.storage_url or f"file://{(self.data_dir / 'files').resolve()}"

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")


def load_settings(**overrides: Any) -> Settings:
    """Read settings from the environment; raise ConfigError naming the bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "?"
            variable = ENV_PREFIX + field.upper()
            raw = overrides.get(field, os.environ.get(variable, error.get("input")))
            problems.append(f"{variable}={raw!r}: {error['msg']}")
        raise ConfigError("invalid configuration: " + "; ".join(problems)) from None
    except SettingsError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from None
