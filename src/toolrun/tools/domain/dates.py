"""Registry date notations -> ISO 8601 UTC text.

WHOIS servers write dates in many ways: ``2019-09-09T08:39:04Z``,
``2019-09-09T08:39:04-0700``, ``2019-09-09T08:39:04.0Z``, ``26-Aug-2004``,
``2001/03/15``, ``2024/04/01 01:05:04 (JST)``, ``19990301``, ``15.03.2001``,
``2024-04-01 12:00:00 UTC``, ``Mon Jan 01 00:00:00 GMT 2024``. Day and month are
read day first when both could be either (``01/02/2024`` is 1 February): that is the
order of every registry we know that writes slashes that way.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}
_ZONES = {
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "ut": 0,
    "jst": 9 * 60,
    "kst": 9 * 60,
    "cst": 8 * 60,  # as Chinese registries use it
    "hkt": 8 * 60,
    "cet": 60,
    "cest": 120,
    "eet": 120,
    "eest": 180,
    "msk": 180,
    "brt": -180,
    "est": -300,
    "edt": -240,
    "pst": -480,
    "pdt": -420,
}
_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2}|[A-Za-z]{1,5})?$"
)
_YMD = re.compile(
    r"^(\d{4})[/.](\d{1,2})[/.](\d{1,2})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*(\S+)?$"
)
_DMY_NAMED = re.compile(
    r"^(\d{1,2})[- ]([A-Za-z]{3})[A-Za-z]*[- ,]+(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*(\S+)?$"
)
_DMY = re.compile(
    r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*(\S+)?$"
)
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_CTIME = re.compile(
    r"^(?:[A-Za-z]{3},?\s+)?([A-Za-z]{3})\s+(\d{1,2})\s+(?:(\d{2}):(\d{2}):(\d{2})\s+)?(?:([A-Za-z]{1,5})\s+)?(\d{4})$"
)
_MDY_NAMED = re.compile(r"^([A-Za-z]{3})[A-Za-z]*\.?\s+(\d{1,2}),?\s+(\d{4})$")


def _zone(text: str | None) -> timezone | None:
    """A tz from ``Z``, ``+09:00``, ``-0700``, ``(JST)``; None when unknown text."""
    if not text:
        return UTC
    text = text.strip("()").strip()
    lowered = text.lower()
    if lowered in _ZONES:
        return timezone(timedelta(minutes=_ZONES[lowered]))
    match = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", text)
    if match:
        minutes = int(match[2]) * 60 + int(match[3])
        return timezone(timedelta(minutes=minutes if match[1] == "+" else -minutes))
    return None


def _build(
    year: str,
    month: int,
    day: str,
    hh: str | None,
    mm: str | None,
    ss: str | None,
    zone: str | None,
) -> datetime | None:
    tz = _zone(zone)
    if tz is None:
        return None
    try:
        return datetime(
            int(year), month, int(day), int(hh or 0), int(mm or 0), int(ss or 0), tzinfo=tz
        )
    except ValueError:
        return None


def parse_date(text: str) -> datetime | None:
    """The instant ``text`` names (UTC when no zone is written), or None."""
    value = re.sub(r"\s+", " ", text.strip())
    value = re.sub(r"\s*#\d+$", "", value)  # registro.br: "19990301 #12345"
    value = re.sub(r"\s*\((?:[^)]*)\)$", lambda m: " " + m[0].strip(), value).strip()
    if not value:
        return None
    if m := _ISO.match(value):
        return _build(m[1], int(m[2]), m[3], m[4], m[5], m[6], m[7])
    if m := _YMD.match(value):
        return _build(m[1], int(m[2]), m[3], m[4], m[5], m[6], m[7])
    if m := _DMY_NAMED.match(value):
        month = _MONTHS.get(m[2].lower())
        return _build(m[3], month, m[1], m[4], m[5], m[6], m[7]) if month else None
    if m := _DMY.match(value):
        first, second = int(m[1]), int(m[2])
        day, month = (m[1], second) if second <= 12 else (m[2], first)
        return _build(m[3], month, day, m[4], m[5], m[6], m[7])
    if m := _COMPACT.match(value):
        return _build(m[1], int(m[2]), m[3], None, None, None, None)
    if m := _CTIME.match(value):
        month = _MONTHS.get(m[1].lower())
        return _build(m[7], month, m[2], m[3], m[4], m[5], m[6]) if month else None
    if m := _MDY_NAMED.match(value):
        month = _MONTHS.get(m[1].lower())
        return _build(m[3], month, m[2], None, None, None, None) if month else None
    return None


def iso_utc(moment: datetime | None) -> str | None:
    """``2024-04-01T03:05:04Z``: the moment in UTC, whole seconds."""
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def to_iso(text: str | None) -> str | None:
    """``parse_date`` then ``iso_utc``; None when the text is no date we read."""
    return iso_utc(parse_date(text)) if text else None
