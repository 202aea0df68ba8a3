"""The exception tree: one base, public messages, codes for job failures."""

from __future__ import annotations

import pytest

from toolrun.net import errors


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (errors.BlockedAddress, 400),
        (errors.ResolveFailed, 400),
        (errors.ConnectFailed, 400),
        (errors.TlsFailed, 400),
        (errors.NetTimeout, 400),
        (errors.TooLarge, 413),
        (errors.TooManyRedirects, 400),
        (errors.RedirectLoop, 400),
        (errors.UnsupportedUrl, 400),
        (errors.BadResponse, 400),
    ],
)
def test_errors_share_one_base_with_codes(cls: type[errors.NetError], code: int) -> None:
    error = cls("something named")
    assert isinstance(error, errors.NetError)
    assert (error.code, error.message, str(error)) == (code, "something named", "something named")
    assert cls().message  # the docstring is the default message


@pytest.mark.parametrize(
    ("size", "text"),
    [(100, "100 bytes"), (1536, "1.5 KiB"), (5 * 1024 * 1024, "5 MiB"), (3 << 30, "3 GiB")],
)
def test_format_bytes(size: int, text: str) -> None:
    assert errors.format_bytes(size) == text


@pytest.mark.parametrize(("seconds", "text"), [(15, "15 s"), (0.5, "0.5 s"), (15.0, "15 s")])
def test_format_seconds(seconds: float, text: str) -> None:
    assert errors.format_seconds(seconds) == text
