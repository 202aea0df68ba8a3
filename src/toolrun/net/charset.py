"""Turn a response body into text the way a browser would.

Order: a byte-order mark, the ``charset`` of the Content-Type header, a
``<meta charset>`` / ``<meta http-equiv>`` (or ``<?xml encoding?>``) in the
first 4 KiB, then detection (valid UTF-8, else charset-normalizer). Labels
map to WHATWG encodings, so ``iso-8859-1`` and ``ascii`` decode as
windows-1252, ``gb2312`` as GBK and ``shift_jis`` as Windows-31J.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

PRESCAN_BYTES = 4096
DETECT_BYTES = 64 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)

# WHATWG Encoding Standard label overrides, as Python codec names.
_WHATWG = {
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "iso_8859-1": "cp1252",
    "l1": "cp1252",
    "cp819": "cp1252",
    "iso-ir-100": "cp1252",
    "iso-8859-9": "cp1254",
    "latin5": "cp1254",
    "iso-8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gbk",
    "gb_2312-80": "gbk",
    "x-gbk": "gbk",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs",
    "utf8": "utf-8",
    "unicode-1-1-utf-8": "utf-8",
}
# Names reported in results, for the codecs above that WHATWG names differently.
_REPORTED = {
    "cp1252": "windows-1252",
    "cp1254": "windows-1254",
    "cp874": "windows-874",
    "cp932": "shift_jis",
    "cp949": "euc-kr",
    "big5hkscs": "big5",
    "utf-16-be": "utf-16be",
    "utf-16-le": "utf-16le",
}

_META = re.compile(rb"<meta\s[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:\-]+)", re.IGNORECASE)
_XML_DECL = re.compile(rb"^<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._\-]+)[\"']")
_COMMENT = re.compile(rb"<!--.*?(-->|$)", re.DOTALL)
_CHARSET_PARAM = re.compile(r";\s*charset\s*=\s*[\"']?([^\"';\s]+)", re.IGNORECASE)


def decode_body(body: bytes, content_type: str | None) -> tuple[str, str]:
    """``(text, encoding)``; never fails (undecodable bytes become U+FFFD)."""
    codec, skip = choose_codec(body, content_type)
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    # final=False keeps a multi-byte sequence cut by the byte cap from becoming U+FFFD.
    text = decoder.decode(body[skip:], final=False)
    return text, _REPORTED.get(codec, codec)


def choose_codec(body: bytes, content_type: str | None) -> tuple[str, int]:
    """The Python codec to decode ``body`` with, and how many BOM bytes to skip."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec, len(bom)
    declared = lookup(header_charset(content_type))
    if declared is not None:
        return declared, 0
    declared = lookup(sniff_declared(body, content_type))
    if declared is not None:
        return declared, 0
    return detect(body), 0


def header_charset(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value."""
    match = _CHARSET_PARAM.search(content_type or "")
    return match.group(1) if match else None


def sniff_declared(body: bytes, content_type: str | None) -> str | None:
    """The charset a document declares about itself in its first 4 KiB."""
    head = body[:PRESCAN_BYTES]
    xml = _XML_DECL.match(head.lstrip())
    if xml:
        return xml.group(1).decode("ascii")
    if "html" not in (content_type or "html"):
        return None
    match = _META.search(_COMMENT.sub(b"", head))
    if not match:
        return None
    label = match.group(1).decode("ascii")
    # WHATWG: a document cannot declare itself UTF-16 in an ASCII-compatible meta.
    return "utf-8" if label.lower().startswith("utf-16") else label


def lookup(label: str | None) -> str | None:
    """The Python codec for an encoding label, WHATWG overrides first; None if unknown."""
    if not label:
        return None
    key = label.strip().lower()
    if key in _WHATWG:
        return _WHATWG[key]
    try:
        return codecs.lookup(key).name
    except LookupError:
        return None


def detect(body: bytes) -> str:
    """Guess the encoding of undeclared bytes: UTF-8 if valid, else charset-normalizer."""
    sample = body[:DETECT_BYTES]
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    best = charset_normalizer.from_bytes(sample).best()
    if best is None:
        return "cp1252"
    return lookup(best.encoding) or "utf-8"
