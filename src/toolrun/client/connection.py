"""Where the API is and which key to use: arguments first, then the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping

BASE_URL_ENV = "TOOLRUN_BASE_URL"
API_KEY_ENV = "TOOLRUN_API_KEY"
DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 30.0
USER_AGENT = "toolrun-client/2.0.0"


class MissingApiKey(ValueError):
    """No API key was given and TOOLRUN_API_KEY is not set."""

    def __init__(self) -> None:
        super().__init__(f"no API key: pass api_key or set {API_KEY_ENV}")


def base_url(value: str | None, env: Mapping[str, str] | None = None) -> str:
    """``value``, else TOOLRUN_BASE_URL, else http://127.0.0.1:8080 (no trailing slash)."""
    environ = os.environ if env is None else env
    chosen = value or environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    return chosen.rstrip("/")


def api_key(value: str | None, env: Mapping[str, str] | None = None) -> str:
    """``value``, else TOOLRUN_API_KEY; raise MissingApiKey when neither is set."""
    environ = os.environ if env is None else env
    chosen = value or environ.get(API_KEY_ENV)
    if not chosen:
        raise MissingApiKey()
    return chosen


def headers(key: str) -> dict[str, str]:
    """Headers every call carries."""
    return {
        "Authorization": f"Bearer {key}",
        "User-Agent": USER_AGENT,
        "Accept": "application/json",
    }
