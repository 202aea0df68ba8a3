from __future__ import annotations

import pytest

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.content import (
    check_charset,
    check_description,
    check_description_length,
    check_doctype,
    check_h1,
    check_head_in_body,
    check_heading_order,
    check_lang,
    check_meta_keywords,
    check_single_title,
    check_title,
    check_title_length,
    check_viewport,
    check_word_count,
)


def doc(head: str = "", body: str = "<p>x</p>", html_attrs: str = "") -> str:
    return f"<!doctype html><html {html_attrs}><head>{head}</head><body>{body}</body></html>"


@pytest.mark.parametrize(
    ("title", "status"),
    [("x" * 29, "warn"), ("x" * 30, "pass"), ("x" * 60, "pass"), ("x" * 61, "warn")],
)
def test_title_length(title: str, status: str) -> None:
    check = check_title_length(site_of(doc(f"<title>{title}</title>")))
    assert check is not None
    assert (check.status, check.value) == (status, len(title))


def test_title_missing_or_empty_fails() -> None:
    assert check_title(site_of(doc())).status == "fail"
    assert check_title(site_of(doc("<title>  </title>"))).status == "fail"
    assert check_title_length(site_of(doc())) is None


def test_multiple_titles() -> None:
    check = check_single_title(site_of(doc("<title>a</title>", "<title>b</title>")))
    assert check is not None
    assert check.status == "warn"


@pytest.mark.parametrize(
    ("length", "status"), [(69, "warn"), (70, "pass"), (160, "pass"), (161, "warn")]
)
def test_description_length(length: int, status: str) -> None:
    head = f'<meta name="description" content="{"d" * length}">'
    check = check_description_length(site_of(doc(head)))
    assert check is not None
    assert check.status == status


@pytest.mark.parametrize(
    ("head", "status"),
    [
        ("", "fail"),
        ('<meta name="description" content="   ">', "fail"),
        ('<meta name="description" content="ok">', "pass"),
        ('<meta name="description" content="a"><meta name="description" content="b">', "warn"),
    ],
)
def test_description(head: str, status: str) -> None:
    assert check_description(site_of(doc(head))).status == status


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("", "fail"),
        ("<h1>A</h1>", "pass"),
        ("<h1>A</h1><h1>B</h1>", "warn"),
        ("<h1> </h1>", "warn"),
    ],
)
def test_h1(body: str, status: str) -> None:
    assert check_h1(site_of(doc(body=body))).status == status


def test_heading_order() -> None:
    bad = check_heading_order(site_of(doc(body="<h1>a</h1><h2>b</h2><h4>c</h4><h2>d</h2>")))
    assert bad is not None
    assert bad.status == "warn"
    assert bad.value["skips"] == ["h2 -> h4 ('c')"]
    good = check_heading_order(site_of(doc(body="<h1>a</h1><h2>b</h2><h3>c</h3><h2>d</h2>")))
    assert good is not None
    assert good.status == "pass"
    assert check_heading_order(site_of(doc())) is None


@pytest.mark.parametrize(
    ("words", "status"), [(10, "fail"), (50, "warn"), (199, "warn"), (200, "pass")]
)
def test_word_count(words: int, status: str) -> None:
    check = check_word_count(
        site_of(doc(body="<p>" + "word " * words + "</p><script>a b c</script>"))
    )
    assert (check.status, check.value) == (status, words)


@pytest.mark.parametrize(
    ("attrs", "status"),
    [
        ("", "fail"),
        ('lang=""', "fail"),
        ('lang="en"', "pass"),
        ('lang="pt-BR"', "pass"),
        ('lang="english!"', "warn"),
    ],
)
def test_lang(attrs: str, status: str) -> None:
    assert check_lang(site_of(doc(html_attrs=attrs))).status == status


@pytest.mark.parametrize(
    ("content", "status"),
    [
        (None, "fail"),
        ("width=1024", "warn"),
        ("width=device-width, initial-scale=1", "pass"),
        ("width=device-width, user-scalable=no", "warn"),
        ("width=device-width, maximum-scale=1", "warn"),
        ("width=device-width, maximum-scale=5", "pass"),
    ],
)
def test_viewport(content: str | None, status: str) -> None:
    head = f'<meta name="viewport" content="{content}">' if content else ""
    assert check_viewport(site_of(doc(head))).status == status


@pytest.mark.parametrize(
    ("headers", "html", "status"),
    [
        ([("content-type", "text/html; charset=utf-8")], doc(), "pass"),
        ([("content-type", "text/html")], doc('<meta charset="utf-8">'), "pass"),
        ([("content-type", "text/html")], "\ufeff" + doc(), "pass"),
        ([("content-type", "text/html")], doc(), "warn"),
        (
            [("content-type", "text/html")],
            doc("<!--" + "x" * 1100 + '--><meta charset="utf-8">'),
            "warn",
        ),
    ],
)
def test_charset(headers: list[tuple[str, str]], html: str, status: str) -> None:
    assert check_charset(site_of(html, headers=headers)).status == status


def test_doctype_keywords_and_head_in_body() -> None:
    assert check_doctype(site_of("<html><p>x</p></html>")).status == "warn"
    keywords = check_meta_keywords(site_of(doc('<meta name="keywords" content="a,b">')))
    assert keywords is not None
    assert keywords.status == "info"
    # A <div> in <head> closes it: the following metas land in <body>.
    moved = check_head_in_body(
        site_of(
            '<html><head><div>oops</div><meta name="description" content="d"><link rel="canonical" href="/"></head><body></body></html>'
        )
    )
    assert moved is not None
    assert moved.value == ["meta[description]", "link[canonical]"]
    assert check_head_in_body(site_of(doc('<meta name="description" content="d">'))) is None


def test_svg_titles_are_not_document_titles() -> None:
    html = doc(
        "<title>Real</title>", "<svg><title>Icon</title></svg><svg><g><title>x</title></g></svg>"
    )
    assert check_single_title(site_of(html)) is None
