"""The WebMCP check: declarative tools read from the HTML, script tools only noticed."""

from __future__ import annotations

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.webmcp import check_webmcp

SEARCH = (
    '<form toolname="search-cars" tooldescription="Perform a car make/model search" '
    "toolautosubmit>"
    '<input type=text name="make" toolparamdescription="The vehicle\'s make" required>'
    '<input type=text name="model">'
    "<input type=hidden name=csrf value=x>"
    "<button type=submit>Search</button>"
    "</form>"
)


def doc(body: str, head: str = "") -> str:
    return f"<!doctype html><html lang=en><head>{head}</head><body>{body}</body></html>"


def test_a_described_tool_form_passes_and_is_listed() -> None:
    check = check_webmcp(site_of(doc(SEARCH)))
    assert check.status == "pass"
    assert check.value["tools"] == [
        {
            "name": "search-cars",
            "description": "Perform a car make/model search",
            "autoSubmit": True,
            "parameters": [
                {"name": "make", "description": "The vehicle's make", "required": True},
                {"name": "model", "description": None, "required": False},
            ],
            "problems": [],
        }
    ]
    assert "1 parameter without toolparamdescription" in check.detail
    assert check.recommendation is None


def test_an_incomplete_tool_form_warns_naming_what_is_missing() -> None:
    body = '<form toolname="subscribe"><input type=email><button>Go</button></form>'
    check = check_webmcp(site_of(doc(body)))
    assert check.status == "warn"
    problems = check.value["tools"][0]["problems"]
    assert problems == [
        "a <input> has no name, so it is no parameter",
        "no tooldescription",
        "no named form controls (the tool takes nothing)",
    ]
    assert '"subscribe": ' in check.detail
    assert check.recommendation


def test_plain_forms_are_info_with_a_suggestion() -> None:
    body = "<form action=/s><input name=q></form><form><input name=e></form>"
    check = check_webmcp(site_of(doc(body)))
    assert check.status == "info"
    assert check.value["formsWithoutTools"] == 2
    assert check.recommendation is not None
    assert "2 forms" in check.recommendation


def test_no_forms_no_tools_is_info_without_a_suggestion() -> None:
    check = check_webmcp(site_of(doc("<p>Nothing to fill in.</p>")))
    assert (check.status, check.recommendation) == ("info", None)
    assert check.value == {
        "tools": [],
        "toolCount": 0,
        "imperativeApiMentioned": False,
        "formsWithoutTools": 0,
    }


def test_a_script_using_the_imperative_api_is_noticed_not_run() -> None:
    script = "<script>navigator.modelContext.registerTool({name: 'x'})</script>"
    check = check_webmcp(site_of(doc("<p>App</p>", head=script)))
    assert check.status == "info"
    assert check.value["imperativeApiMentioned"] is True
    assert "navigator.modelContext" in check.detail


def test_an_empty_toolname_is_no_tool() -> None:
    check = check_webmcp(site_of(doc('<form toolname=" "><input name=a></form>')))
    assert check.status == "info"
    assert check.value["formsWithoutTools"] == 1
