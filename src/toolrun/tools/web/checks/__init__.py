"""Check families: each module turns a ``Site`` into a list of ``Check`` results.

A check function takes the ``Site`` and returns one ``Check`` or None (when it
does not apply); ``run_checks`` runs a list of them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from toolrun.tools.web.models import Check, CheckStatus
from toolrun.tools.web.site import Site

CheckFunction = Callable[[Site], Check | None]


def make(
    id: str,
    title: str,
    status: CheckStatus,
    value: Any,
    detail: str,
    recommendation: str | None = None,
) -> Check:
    """Build a check; a passing check carries no recommendation."""
    return Check(
        id=id,
        title=title,
        status=status,
        value=value,
        detail=detail,
        recommendation=None if status == "pass" else recommendation,
    )


def run_checks(site: Site, functions: Iterable[CheckFunction]) -> list[Check]:
    """Run each check function on ``site``, keeping those that apply."""
    results = []
    for function in functions:
        check = function(site)
        if check is not None:
            results.append(check)
    return results


def plural(count: int, word: str, many: str | None = None) -> str:
    """``plural(2, "link")`` -> ``"2 links"``."""
    return f"{count} {word}" if count == 1 else f"{count} {many or word + 's'}"
