"""The C tree walk against selectolax's own API: same nodes, attributes and texts."""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser, LexborNode

from toolrun.tools.web.page import _LISTED, COUNTED_TAGS, Page
from toolrun.tools.web.treewalk import (
    HEADING_TAGS,
    HIDDEN_TAGS,
    IMAGE_COLUMNS,
    TreeWalker,
    count_netlocs,
    count_words,
    word_stats,
)

PIECES = (
    '<a href="/p">',
    "<a>",
    "<a href>",
    '<a href="https://x.example/" rel="nofollow noopener">',
    '<a rel href="#top" xlink:href="/b">',
    "</a>",
    '<img src="/i.png" alt="An image" width=10>',
    "<img alt>",
    '<img style="width:1px" HEIGHT=2 SRC=/x title=t>',
    "<h1>",
    "<h2>",
    "<h3>Title</h3>",
    "<h6>",
    "</h1>",
    "<script>var a = '<a href=x>';</script>",
    '<script type="application/ld+json">{"@type": "Thing"}</script>',
    "<style>a{}</style>",
    "<noscript><img src=n><a href=/n>no</a><script>s</script></noscript>",
    "<template><a href=t>t</a><h2>t</h2></template>",
    "<svg><a href=s>svg</a><title>svg title</title></svg>",
    "<my-widget><h2>custom</h2></my-widget>",
    "<section>",
    "</section>",
    "<ul><li>one<li>two</ul>",
    "<ol>",
    "<table><tr><td>cell</table>",
    '<meta name="description" content="d">',
    '<link rel="icon" href="/f.ico">',
    "<title>T</title>",
    "<base href=/b/>",
    "<form><input name=q><select><option>o</select><textarea>t</textarea></form>",
    "<label>L</label><button>B</button><time datetime=2026-01-01>t</time>",
    "<details><summary>S</summary></details><dl><dt>T<dd>D</dl>",
    "<main>",
    "<article>",
    "<nav>",
    "<video src=v><source src=s></video><audio src=a></audio><iframe src=f></iframe>",
    "<div>",
    "</div>",
    "<p>",
    "text ",
    "caf\u00e9 \u6f22\u5b57 &amp; &lt; ",
    "<!-- <a href=c>comment</a> -->",
    "<p>x<a href=1>one<p>two</a>",
    "</head> between <body>",
    "</body> after the body ",
    "<frameset><frame src=f></frameset>",
    "<textarea>a <b> b</textarea><title>in body</title>",
)


def reference(parser: LexborHTMLParser, *, read: bool) -> dict[str, Any]:
    """What the Python walk this replaces found (``root.traverse()``), for comparison."""
    lists: dict[str, list[int]] = {name: [] for names in _LISTED.values() for name in names}
    if read:
        del lists["a"], lists["img"]
    found: dict[str, Any] = {
        "headings": [],
        "counts": dict.fromkeys(COUNTED_TAGS, 0),
        "hidden": [],
        "reread": False,
        "anchors": [],
        "images": [],
    }
    root = parser.root
    assert root is not None
    elements = 0
    names: set[str] = set()
    walk = root.traverse()
    for node in walk:
        tag = node.tag or ""
        if tag in HIDDEN_TAGS:
            found["hidden"].append(node.mem_id)
            for inner in islice(walk, sum(1 for _ in node.traverse()) - 1):
                if inner.tag in HIDDEN_TAGS:
                    found["hidden"].append(inner.mem_id)
            continue
        elements += node.is_element_node
        if node.is_element_node and node.mem_id != root.mem_id:
            names.update(node.attributes)
        if tag in COUNTED_TAGS:
            found["counts"][tag] += 1
            continue
        if tag in HEADING_TAGS:
            found["headings"].append((int(tag[1]), _visible_text(node)))
            continue
        if tag not in _LISTED:
            continue
        if read and tag == "a":
            attrs = node.attributes
            href = attrs["href"] or "" if "href" in attrs else None
            found["anchors"].append((href, attrs.get("rel"), _visible_text(node)))
        elif read and tag == "img":
            attrs = node.attributes
            columns = tuple(attrs.get(name, False) for name in IMAGE_COLUMNS)
            found["images"].append((columns, attrs.get("src")))
        else:
            for name in _LISTED[tag]:
                lists[name].append(node.mem_id)
    found["lists"] = lists
    found["elements"] = elements
    found["names"] = names
    return found


def walked(parser: LexborHTMLParser, *, read: bool) -> dict[str, Any]:
    lists: dict[str, list[LexborNode]] = {name: [] for names in _LISTED.values() for name in names}
    if read:
        del lists["a"], lists["img"]
    root = parser.root
    assert root is not None
    walker = TreeWalker(_LISTED, COUNTED_TAGS)
    result = walker.walk(root, parser.body, parser, lists, read=read, hidden=True)
    return {
        "headings": list(zip(result.heading_levels, result.heading_texts, strict=True)),
        "counts": walker.counts(result),
        "hidden": [node.mem_id for node in result.hidden],
        "reread": result.hidden_inside_text,
        "anchors": list(
            zip(
                result.anchor_hrefs,
                result.anchor_rels,
                result.anchor_texts,
                strict=True,
            )
        ),
        "images": list(
            zip(
                zip(*(getattr(result.image_columns, name) for name in IMAGE_COLUMNS), strict=True),
                result.image_srcs,
                strict=True,
            )
        ),
        "lists": {name: [node.mem_id for node in nodes] for name, nodes in lists.items()},
        "elements": result.element_count,
        "names": result.attribute_names,
        "body_text": result.body_text,
    }


def _visible_text(node: LexborNode) -> str:
    """``text_lexbor()`` once the hidden elements are removed: its text nodes, less those in
    hidden elements."""
    parts = []
    walk = node.traverse(include_text=True)
    next(walk)  # the node itself
    for inner in walk:
        if inner.tag in HIDDEN_TAGS:
            for _ in islice(walk, sum(1 for _ in inner.traverse(include_text=True)) - 1):
                pass
        elif inner.is_text_node:
            parts.append(inner.text_content or "")
    return "".join(parts)


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=40), read=st.booleans())
def test_walk_finds_what_the_python_walk_found(pieces: list[str], read: bool) -> None:
    parser = LexborHTMLParser("".join(pieces))
    found = walked(parser, read=read)
    body_text = found.pop("body_text")
    assert found == reference(parser, read=read)
    # the body's text: what selectolax gives once the hidden elements are removed
    for node in reversed(parser.css(", ".join(HIDDEN_TAGS))):
        node.decompose()
    body = parser.body
    attached = body is not None and body.parent is not None  # a frameset displaces it
    assert body_text == (body.text(separator=" ") if body is not None and attached else "")
    assert body_text == Page.from_html("".join(pieces)).body_text


def test_every_piece_at_once_in_both_modes() -> None:
    html = "<!doctype html><html lang=en><head></head><body>" + "".join(PIECES)
    for read in (True, False):
        parser = LexborHTMLParser(html)
        found = walked(parser, read=read)
        assert found.pop("body_text")
        assert found == reference(parser, read=read)
        assert found["hidden"]
        assert found["headings"]
        assert found["counts"]["main"]


def test_a_script_inside_a_link_or_heading_has_their_texts_read_again() -> None:
    page = Page.from_html(
        '<h2>To<style>b{}</style>p</h2><a href="/x">Go<script>s()</script> on</a>'
    )
    page.index_elements()
    assert page.anchor_texts == ["Go on"]
    assert page.heading_texts == ["Top"]
    assert page.script_count == 1


def test_texts_and_values_are_decoded_as_selectolax_decodes_them() -> None:
    html = '<a href="/caf\u00e9?q=\u6f22" rel="&quot;x&quot;">\u00e9t\u00e9 &amp; \U0001f600</a>'
    found = walked(LexborHTMLParser(html), read=True)
    assert found["anchors"] == [
        (
            "/caf\u00e9?q=\u6f22",
            '"x"',
            "\u00e9t\u00e9 & \U0001f600",
        )
    ]


def test_an_empty_document_walks_to_its_three_elements() -> None:
    found = walked(LexborHTMLParser(""), read=True)
    assert found["elements"] == 3  # html, head, body
    assert found["anchors"] == []


ALL_SPACES = "".join(chr(code) for code in range(0x110000) if chr(code).isspace())


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from([*ALL_SPACES, "a", "\u00e9", "\u6f22", "\U0001f600"])))
def test_word_stats_are_what_split_and_isspace_give(text: str) -> None:
    assert word_stats(text) == (len(text.split()), sum(char.isspace() for char in text))


def test_word_stats_of_every_space_between_words() -> None:
    text = "a".join(ALL_SPACES)
    assert word_stats(text) == (len(ALL_SPACES) - 1, len(ALL_SPACES))


def test_the_dom_size_leaves_out_hidden_elements_and_what_they_hold() -> None:
    html = "<p>a<script>x</script><noscript><img><b>b</b></noscript><template><i>t</i></template>"
    assert Page.from_html(html).element_count == 4  # html, head, body, p
    page = Page.from_html(html)
    page.tree  # noqa: B018 (the hidden elements removed before the walk: the same count)
    assert page.element_count == 4


def test_attribute_names_answer_the_attribute_gates() -> None:
    page = Page.from_html(
        '<html lang=en itemscope><body><p LANG="fr" Style="x">t<svg viewBox="0 0 1 1"></svg>'
        "<script data-hidden=1></script></body></html>"
    )
    page.index_elements()
    assert page.has_attribute("lang")
    assert page.has_attribute("style")
    assert page.has_attribute("itemscope")  # on the root
    assert page.has_attribute("viewBox")  # SVG keeps its case
    assert not page.has_attribute("data-hidden")  # scripts are removed
    assert not page.has_attribute("itemtype")
    assert page.has_lang_below_root


def test_many_distinct_attribute_names_are_all_kept() -> None:
    names = [f"data-n{index}" for index in range(1000)]
    page = Page.from_html("<body>" + "".join(f"<i {name}>x</i>" for name in names))
    page.index_elements()
    assert all(page.has_attribute(name) for name in names)
    assert page.__dict__["_attribute_names"] == frozenset(names)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(["a", "b", "\u00e9t\u00e9", "\u6f22", "\U0001f600", "ab"])),
    spaces=st.lists(st.sampled_from([" ", "\n", "\xa0", "\u3000", "  \t"]), min_size=1),
    limit=st.integers(min_value=0, max_value=30),
    keep=st.integers(min_value=0, max_value=30),
)
def test_count_words_is_a_counter_of_the_leading_words(
    words: list[str], spaces: list[str], limit: int, keep: int
) -> None:
    text = spaces[0] + "".join(word + spaces[i % len(spaces)] for i, word in enumerate(words))
    split = text.split()
    counts, leading = count_words(text, limit, keep)
    assert list(counts.items()) == list(Counter(split[:limit]).items())
    assert leading == split[: min(keep, limit)]


def test_deeply_nested_links_past_the_capture_stack_are_read_again() -> None:
    html = "<body><svg>" + "<a href=/x>x" * 24 + "<script>hidden()</script>" + "</a>" * 24
    page = Page.from_html(html)
    page.index_elements()
    assert len(page.anchor_texts) == 24
    assert page.anchor_texts == [node.text_lexbor() for node in page.tree.css("a")]
    assert "hidden" not in "".join(page.anchor_texts)


@pytest.mark.parametrize(
    "text",
    ["", " ", "a", " a\x85b\xa0c\x1cd\te\u00e9 ", "\x1f\x1c x", "caf\u00e9  au\xa0lait"],
)
def test_word_functions_on_one_byte_strings(text: str) -> None:
    words = text.split()
    assert word_stats(text) == (len(words), sum(char.isspace() for char in text))
    assert count_words(text, 3, 2) == (dict(Counter(words[:3])), words[:2])


def test_heading_texts_not_read_by_the_walk_are_read_from_the_nodes() -> None:
    html = "<h1>One</h1><h2>Two<script>x()</script></h2><h3>Three?</h3><h2>Four</h2>"
    page = Page.from_html(html)
    page.index_elements(heading_text_levels=())  # h1 texts only
    assert page.__dict__["_heading_texts"] == ["One", None, None, None]
    assert page.h1_texts == ["One"]
    assert page.heading_texts_at((2, 4)) == ["Two", "Four"]
    assert page.heading_texts == ["One", "Two", "Three?", "Four"]
    everything = Page.from_html(html)
    everything.index_elements()
    assert everything.__dict__["_heading_texts"] == everything.heading_texts
    assert everything.heading_texts == page.heading_texts


NETLOC_PATTERN = re.compile(r"\0(?:https?:)?//([^/\0]*)(/?)", re.I | re.A)
HREF_PIECES = [
    "http:",
    "HTTPS:",
    "hTtP:",
    "https",
    "//",
    "/",
    "a.test",
    "x:1",
    "@",
    "?q",
    "\xe9",
    "",
]


@settings(max_examples=500, deadline=None)
@given(hrefs=st.lists(st.lists(st.sampled_from(HREF_PIECES), max_size=6).map("".join)))
def test_count_netlocs_counts_what_the_pattern_finds(hrefs: list[str]) -> None:
    joined = "\0" + "\0".join(hrefs) + "\0"
    assert count_netlocs(joined) == dict(Counter(NETLOC_PATTERN.findall(joined)))


def test_count_netlocs_leaves_wide_strings_to_the_pattern() -> None:
    assert count_netlocs("\0//\u6f22.test/\0") is None
