from __future__ import annotations

import pytest

from toolrun.tools.web.models import Check, CheckStatus
from toolrun.tools.web.scoring import score, suggestions, summarize


def check(id: str, status: CheckStatus, recommendation: str | None = "fix it") -> Check:
    return Check(
        id=id, title=id, status=status, value=None, detail="d", recommendation=recommendation
    )


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        ([], None),
        ([check("a", "info")], None),
        ([check("a", "pass"), check("b", "pass")], 100.0),
        ([check("a", "pass"), check("b", "fail")], 50.0),
        ([check("a", "pass"), check("b", "warn"), check("c", "info")], 75.0),
        # weights: document-title 3, a 1 -> (3*1 + 1*0) / 4
        ([check("document-title", "pass"), check("a", "fail")], 75.0),
        # a failed gate caps the score at 49 even when the weighted mean is higher
        ([check("is-crawlable", "fail")] + [check(f"c{i}", "pass") for i in range(20)], 49.0),
        ([check("is-crawlable", "warn")] + [check(f"c{i}", "pass") for i in range(20)], 90.0),
    ],
)
def test_score(checks: list[Check], expected: float | None) -> None:
    assert score(checks) == expected


@pytest.mark.parametrize(
    ("passed", "failed", "status"), [(9, 1, "pass"), (5, 5, "warn"), (4, 6, "fail")]
)
def test_summary_status_bands(passed: int, failed: int, status: str) -> None:
    checks = [check(f"p{i}", "pass") for i in range(passed)] + [
        check(f"f{i}", "fail") for i in range(failed)
    ]
    summary = summarize([*checks, check("i", "info")])
    assert (summary.status, summary.passed, summary.failed, summary.info) == (
        status,
        passed,
        failed,
        1,
    )


def test_summary_without_scored_checks() -> None:
    summary = summarize([])
    assert summary.score is None
    assert summary.status == "warn"


def test_suggestions_put_failures_and_heavy_checks_first() -> None:
    checks = [
        check("a", "warn", "warn-a"),
        check("b", "fail", "fail-b"),
        check("is-crawlable", "fail", "unblock"),
        check("c", "pass", None),
    ]
    assert suggestions(checks) == ["is-crawlable: unblock", "b: fail-b", "a: warn-a"]
