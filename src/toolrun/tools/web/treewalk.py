"""The element index of a parsed page in one walk, done in C (``_lexbor_walk.c``).

A Python walk over a large page's elements costs more than the parse itself; the C
walk visits lexbor's nodes directly and returns what the checks read: LexborNode
objects of the listed tags, counts of the counted ones, each heading's level (and text),
the hidden (script, style, template, noscript) elements in document order, each link's
href, rel and text, some attributes of each image, the attribute names in use, the DOM
size and the body's text. ``word_stats``, ``count_words`` and ``count_netlocs`` count over
large strings in C too.

The binding relies on selectolax's extension: its exported lexbor functions, LexborNode's
Cython vtable, and the layout of lexbor's node (read directly for speed). Each is checked
when this module is imported, against lexbor's functions and selectolax's own API, so that
a selectolax release the binding does not fit fails at import rather than giving wrong
results (and ``pyproject.toml`` pins the release line).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import selectolax.lexbor
from selectolax.lexbor import LexborHTMLParser, LexborNode

import toolrun.tools.web._lexbor_walk as _lexbor_walk

KIND_LISTED = 1
KIND_HIDDEN = 2
KIND_LINK = 3
KIND_IMAGE = 4
KIND_COUNTED = 5
KIND_HEADING = 10  # + the level: 11 for h1 ... 16 for h6
HIDDEN_TAGS = ("script", "style", "template", "noscript")
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# The image attributes the walk reads, in the order of ``ImageColumns`` (as in the C walk).
IMAGE_COLUMNS = ("src", "alt", "width", "height", "style")
# Each value: the attribute's value, None when it has none, False when the image lacks it.
ImageValue = str | None | bool


@dataclass(slots=True)
class ImageColumns:
    """Some attributes of every ``<img>``, one list per attribute, in document order."""

    src: list[ImageValue]
    alt: list[ImageValue]
    width: list[ImageValue]
    height: list[ImageValue]
    style: list[ImageValue]


_SCRATCH = LexborHTMLParser("")


def tag_id(tag: str) -> int:
    """Lexbor's id of a standard tag."""
    return _SCRATCH.create_node(tag).tag_id


@dataclass(slots=True)
class Walked:
    """What one walk found; the link and image lists are empty unless it read them."""

    element_count: int
    tag_counts: dict[int, int]
    heading_levels: list[int]
    heading_texts: list[str | None]  # None for a level whose texts were not read
    hidden: list[LexborNode]
    hidden_inside_text: bool
    anchor_hrefs: list[str | None]
    anchor_rels: list[str | None]
    anchor_texts: list[str]
    image_columns: ImageColumns
    image_srcs: list[str | None]
    attribute_names: frozenset[str]
    body_text: str


class TreeWalker:
    """Walks trees for one table of listed tags (tag -> the names of the lists it goes to)
    and counted tags; links, images and headings are always walked for."""

    def __init__(self, listed: dict[str, tuple[str, ...]], counted: tuple[str, ...]) -> None:
        self.listed = {tag_id(tag): names for tag, names in listed.items()}
        self.counted = {tag_id(tag): tag for tag in counted}
        special = {
            **{tag_id(tag): KIND_HEADING + level for level, tag in enumerate(HEADING_TAGS, 1)},
            tag_id("a"): KIND_LINK,
            tag_id("img"): KIND_IMAGE,
        }
        hidden = [tag_id(tag) for tag in HIDDEN_TAGS]
        kinds = bytearray(max([*self.listed, *self.counted, *special, *hidden]) + 1)
        for tag in self.listed:
            kinds[tag] = KIND_LISTED
        for tag in self.counted:
            kinds[tag] = KIND_COUNTED
        for tag, kind in special.items():
            kinds[tag] = kind
        self._kinds = bytes(kinds)
        for tag in hidden:
            kinds[tag] = KIND_HIDDEN
        self._kinds_with_hidden = bytes(kinds)

    def counts(self, walked: Walked) -> dict[str, int]:
        """The counts of the counted tags, by tag name (0 for those not found)."""
        return {tag: walked.tag_counts.get(tag_id, 0) for tag_id, tag in self.counted.items()}

    def walk(
        self,
        root: LexborNode,
        body: LexborNode | None,
        parser: LexborHTMLParser,
        lists: dict[str, list[LexborNode]],
        *,
        read: bool,
        hidden: bool,
        heading_text_levels: Iterable[int] = range(1, 7),
    ) -> Walked:
        """Append every listed element below ``root`` (included) to its lists, in document
        order; count the counted tags; read each heading's level, and its text if its level
        is one of ``heading_text_levels``. With ``read``, links (href, rel, text) and images
        (``IMAGE_COLUMNS``) are read instead of listed; with ``hidden``, hidden elements are
        noted and what they hold is not walked for. The text below ``body``
        (outside hidden elements) is gathered as ``body.text(separator=" ")`` gives it."""
        kinds = self._kinds_with_hidden if hidden else self._kinds
        routes: list[tuple[list[LexborNode], ...]] = [()] * len(kinds)
        for tag, names in self.listed.items():
            routes[tag] = tuple(lists[name] for name in names if name in lists)
        walked = _lexbor_walk.walk(
            root.mem_id,
            body.mem_id if body is not None else 0,
            parser,
            kinds,
            routes,
            read,
            sum(1 << level for level in set(heading_text_levels)),
        )
        # the image columns come as a tuple of lists
        return Walked(*walked[:9], ImageColumns(*walked[9]), *walked[10:])


def word_stats(text: str) -> tuple[int, int]:
    """``(len(text.split()), how many characters of text are whitespace)``."""
    return _lexbor_walk.word_stats(text)


def count_words(text: str, limit: int, keep: int) -> tuple[dict[str, int], list[str]]:
    """``(dict(Counter(words[:limit])), words[:keep])`` for ``words = text.split()``."""
    return _lexbor_walk.count_words(text, limit, min(keep, limit))


# The fields of lexbor's node before a text node's characters: 13 words on 64-bit builds
# (selectolax/lexbor.pxd); the others are tried if a build differs.
_TEXT_OFFSETS = (104, 112, 96, 120, 128, 88)


def _find_text_offset() -> None:
    probes = [LexborHTMLParser(f"<p>{text}</p>") for text in ("toolrun", "a longer probe text")]
    nodes = [probe.css("p")[0].first_child for probe in probes]
    for offset in _TEXT_OFFSETS:
        if all(
            node is not None and _lexbor_walk.check_text_offset(node.mem_id, offset)
            for node in nodes
        ):
            return
    raise ImportError("could not find where selectolax's lexbor keeps a text node's text")


def count_netlocs(joined: str) -> dict[tuple[str, str], int] | None:
    """``Counter(re.findall(r"\\0(?:https?:)?//([^/\\0]*)(/?)", joined, re.I | re.A))`` for a
    str of one-byte characters; None for any other."""
    return _lexbor_walk.count_netlocs(joined)


def _bind() -> None:
    vtable = LexborNode.__dict__.get("__pyx_vtable__")
    if vtable is None:
        raise ImportError("selectolax's LexborNode has no Cython vtable to bind to")
    _lexbor_walk.bind(selectolax.lexbor.__file__, vtable)
    probe = LexborHTMLParser(
        "<!doctype html><title>t</title><p>a<!-- c --><b>b</b><svg><a>s</a></svg><my-tag>x"
    )
    document = probe.css("html")[0].parent
    if document is None or not _lexbor_walk.check_node_layout(document.mem_id):
        raise ImportError("selectolax's lexbor nodes are not laid out as the C walk reads them")
    _find_text_offset()
    page = LexborHTMLParser('<p><a href="/x" rel>Go <b>on</b></a><img src=i alt><h2>T</h2>')
    [root], [paragraph], [anchor] = (page.css(tag) for tag in ("html", "p", "a"))
    lists: dict[str, list[LexborNode]] = {"p": []}
    walker = TreeWalker({"p": ("p",)}, ("b",))
    walked = walker.walk(root, page.body, page, lists, read=True, hidden=True)
    expected = (
        ["/x"],
        [None],
        [anchor.text_lexbor()],
        ImageColumns(["i"], [None], [False], [False], [False]),
        ["i"],
        [paragraph.mem_id],
        {"b": 1},
        ([2], ["T"]),
        len(page.css("*")),
        page.body.text(separator=" ") if page.body else "",
    )
    found = (
        walked.anchor_hrefs,
        walked.anchor_rels,
        walked.anchor_texts,
        walked.image_columns,
        walked.image_srcs,
        [node.mem_id for node in lists["p"]],
        walker.counts(walked),
        (walked.heading_levels, walked.heading_texts),
        walked.element_count,
        walked.body_text,
    )
    if found != expected:
        raise ImportError(f"the C tree walk does not fit this selectolax: {found} != {expected}")


_bind()
