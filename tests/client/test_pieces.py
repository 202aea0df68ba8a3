"""The client's pure parts: field parsing, error mapping, back-off, the resume file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolrun.client import calls, resume
from toolrun.client.errors import (
    ApiError,
    AuthError,
    BadRequest,
    RateLimited,
    ServerError,
    error_from_response,
)
from toolrun.client.flows import RetryPolicy, target_path
from toolrun.client.render import parse_fields


@pytest.mark.parametrize(
    ("raw", "fields", "expected"),
    [
        (None, ["domain=example.com"], {"domain": "example.com"}),
        (None, ['types=["A","MX"]', "width=256"], {"types": ["A", "MX"], "width": 256}),
        (None, ["strip=true", "note=a=b"], {"strip": True, "note": "a=b"}),
        ('{"url": "https://a.example/", "n": 1}', ["n=2"], {"url": "https://a.example/", "n": 2}),
        (None, ["empty="], {"empty": ""}),
    ],
)
def test_parse_fields(raw: str | None, fields: list[str], expected: dict[str, Any]) -> None:
    assert parse_fields(raw, fields) == expected


@pytest.mark.parametrize(
    ("raw", "fields", "message"),
    [("{", [], "not JSON"), ("[]", [], "JSON object"), (None, ["x"], "NAME=VALUE")],
)
def test_parse_fields_refuses(raw: str | None, fields: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_fields(raw, fields)


def test_keyword_names_become_camel_case() -> None:
    merged = calls.merge_payload(
        {"taskId": "t", "format": "png"}, {"max_width": 5, "format": "jpeg"}
    )
    assert merged == {"taskId": "t", "format": "jpeg", "maxWidth": 5}


def test_idempotency_keys_over_128_characters_are_refused() -> None:
    assert calls.execute("dns-lookup", {}, "k" * 128).headers == {"Idempotency-Key": "k" * 128}
    with pytest.raises(ValueError, match="128"):
        calls.execute("dns-lookup", {}, "k" * 129)


def _answer(status: int, body: Any = None, **headers: str) -> httpx.Response:
    if isinstance(body, str):
        return httpx.Response(status, text=body, headers=headers)
    return httpx.Response(status, json=body, headers=headers)


@pytest.mark.parametrize(
    ("response", "kind", "code", "message"),
    [
        (_answer(401, {"code": 401, "message": "bad key", "data": {}}), AuthError, 401, "bad key"),
        (_answer(400, {"code": 400, "message": "m", "data": {"errors": []}}), BadRequest, 400, "m"),
        (
            _answer(429, {"code": 429, "message": "slow"}, **{"Retry-After": "7"}),
            RateLimited,
            429,
            "slow",
        ),
        (_answer(502, "<h1>bad gateway</h1>"), ServerError, 502, "Bad Gateway"),
        (_answer(418, {"unexpected": True}), ApiError, 418, "I'm a teapot"),
    ],
)
def test_error_from_response(
    response: httpx.Response, kind: type[ApiError], code: int, message: str
) -> None:
    error = error_from_response(response)
    assert type(error) is kind
    assert (error.code, error.message, error.status) == (code, message, response.status_code)
    if isinstance(error, RateLimited):
        assert error.retry_after == 7


def test_backoff_doubles_up_to_the_cap() -> None:
    policy = RetryPolicy(backoff_s=0.5, max_backoff_s=3.0)
    assert [policy.backoff(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("disposition", "name"),
    [
        ('attachment; filename="out.png"', "out.png"),
        ("attachment; filename*=UTF-8''b%C3%BCcher.webp", "bücher.webp"),
        ('attachment; filename="../../etc/passwd"', "passwd"),
        (None, "download"),
    ],
)
def test_downloads_into_a_directory_take_the_servers_name(
    tmp_path: Path, disposition: str | None, name: str
) -> None:
    headers = {"content-disposition": disposition} if disposition else {}
    assert target_path(tmp_path, httpx.Response(200, headers=headers)) == tmp_path / name
    assert target_path(tmp_path / "x.png", httpx.Response(200)) == tmp_path / "x.png"


def test_resume_state_round_trip_and_expiry(tmp_path: Path) -> None:
    now = datetime(2026, 3, 2, tzinfo=UTC)
    state_path = tmp_path / "state.json"
    state = resume.UploadState("t1", 4, 3, now + timedelta(hours=1), {0, 2})
    resume.save(state_path, "a|1|2", state)
    resume.save(state_path, "b|1|2", resume.UploadState("t2", 4, 1, now - timedelta(seconds=1)))
    assert resume.load(state_path, "a|1|2", now) == state
    assert resume.load(state_path, "b|1|2", now) is None  # expired
    assert resume.load(state_path, "c|1|2", now) is None
    resume.forget(state_path, "a|1|2")
    resume.forget(state_path, "b|1|2")
    assert not state_path.exists()


def test_an_unreadable_resume_file_means_a_fresh_upload(tmp_path: Path) -> None:
    state_path = tmp_path / "state.json"
    state_path.write_text("{not json")
    assert resume.load(state_path, "a", datetime.now(UTC)) is None
