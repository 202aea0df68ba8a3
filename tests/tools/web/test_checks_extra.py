from __future__ import annotations

import pytest

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.agents import check_agent_accessibility
from toolrun.tools.web.checks.keywords import check_keywords


def doc(body: str) -> str:
    return f"<!doctype html><html lang=en><head></head><body>{body}</body></html>"


def test_keywords_report_top_terms_and_phrases() -> None:
    text = "Rocket engines burn fuel. " * 5 + " ".join(f"word{i}" for i in range(400))
    check = check_keywords(site_of(doc(f"<p>{text}</p>")))
    assert check is not None
    assert check.status == "info"  # 5 of 420 words is 1.2%, under the 2.5% stuffing threshold
    top = {t["term"]: t["count"] for t in check.value["terms"]}
    assert top["rocket"] == 5
    assert top["engines"] == 5
    assert {"phrase": "rocket engines", "count": 5} in check.value["phrases"]


@pytest.mark.parametrize(("repeat", "status"), [(5, "info"), (20, "warn")])
def test_keyword_stuffing(repeat: int, status: str) -> None:
    filler = " ".join(f"word{i}" for i in range(300))
    check = check_keywords(site_of(doc(f"<p>{filler} {'rockets ' * repeat}</p>")))
    assert check is not None
    assert check.status == status


def test_keywords_skip_empty_pages() -> None:
    assert check_keywords(site_of(doc(""))) is None


@pytest.mark.parametrize(
    ("body", "rules"),
    [
        ('<button>Send</button><a href="/x">Home</a><label>Name <input name="n"></label>', []),
        ("<button></button>", ["button-name"]),
        ('<button aria-label="Close"></button>', []),
        ('<a href="/x"><img src="i.png" alt="Home"></a>', []),
        ('<a href="/x"><img src="i.png"></a>', ["link-name"]),
        ('<input type="image" src="go.png">', ["input-image-alt"]),
        ('<input name="q">', ["label"]),
        ('<input name="q" placeholder="Search">', []),
        ('<label for="e">Email</label><input id="e" name="e">', []),
        ('<input type="hidden" name="t"><input type="submit">', []),
        ("<select name=s><option>1</option></select>", ["select-name"]),
    ],
)
def test_agent_accessibility(body: str, rules: list[str]) -> None:
    check = check_agent_accessibility(site_of(doc(body)))
    assert [p["rule"] for p in check.value] == rules
    assert check.status == ("warn" if rules else "pass")
