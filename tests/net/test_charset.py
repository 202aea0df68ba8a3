"""Charset choice without a server: labels, the 4 KiB prescan window, detection."""

from __future__ import annotations

import pytest

from toolrun.net.charset import PRESCAN_BYTES, decode_body, lookup


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("ISO-8859-1", "cp1252"),
        ("latin1", "cp1252"),
        ("ascii", "cp1252"),
        ("windows-1252", "cp1252"),
        ("Shift_JIS", "cp932"),
        ("x-sjis", "cp932"),
        ("GB2312", "gbk"),
        ("gb18030", "gb18030"),
        ("EUC-KR", "cp949"),
        ("euc-jp", "euc_jp"),
        ("koi8-r", "koi8-r"),
        (" UTF-8 ", "utf-8"),
        ("no-such-charset", None),
        ("", None),
        (None, None),
    ],
)
def test_lookup_maps_labels_like_whatwg(label: str | None, codec: str | None) -> None:
    assert lookup(label) == codec


def test_meta_after_the_prescan_window_is_ignored() -> None:
    body = b" " * PRESCAN_BYTES + b"<meta charset=shift_jis>caf\xc3\xa9"
    text, encoding = decode_body(body, "text/html")
    assert (text.endswith("café"), encoding) == (True, "utf-8")


def test_meta_is_ignored_outside_html() -> None:
    text, encoding = decode_body(b"<meta charset=shift_jis>caf\xc3\xa9", "text/plain")
    assert (text, encoding) == ("<meta charset=shift_jis>café", "utf-8")


@pytest.mark.parametrize(
    ("text", "codec"),
    [("日本語のテキストです。" * 20, "shift_jis"), ("这是一个中文网页的内容。" * 20, "gb18030")],
)
def test_undeclared_legacy_text_is_detected(text: str, codec: str) -> None:
    decoded, _encoding = decode_body(text.encode(codec), "text/html")
    assert decoded == text


def test_undecodable_bytes_become_replacement_characters() -> None:
    text, encoding = decode_body(b"ok \xff\xfe\xfd end", "text/plain; charset=utf-8")
    assert (text, encoding) == ("ok \ufffd\ufffd\ufffd end", "utf-8")
