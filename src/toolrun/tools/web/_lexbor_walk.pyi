"""Types of the C walk (``_lexbor_walk.c``); ``treewalk.py`` is its one caller."""

from selectolax.lexbor import LexborNode

def bind(library_path: str, node_vtable: object, /) -> None: ...
def check_node_layout(root_address: int, /) -> bool: ...
def check_text_offset(text_address: int, offset: int, /) -> bool: ...
def walk(
    root_address: int,
    body_address: int,
    parser: object,
    kinds: bytes,
    routes: list[tuple[list[LexborNode], ...]],
    read: bool,
    heading_text_levels: int,
    /,
) -> tuple[
    int,
    dict[int, int],
    list[int],
    list[str | None],
    list[LexborNode],
    bool,
    list[str | None],
    list[str | None],
    list[str],
    tuple[
        list[str | bool | None],
        list[str | bool | None],
        list[str | bool | None],
        list[str | bool | None],
        list[str | bool | None],
    ],
    list[str | None],
    frozenset[str],
    str,
]: ...
def count_netlocs(joined: str, /) -> dict[tuple[str, str], int] | None: ...
def word_stats(text: str, /) -> tuple[int, int]: ...
def count_words(text: str, limit: int, keep: int, /) -> tuple[dict[str, int], list[str]]: ...
