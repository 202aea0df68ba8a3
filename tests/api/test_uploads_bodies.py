"""The chunk route's multipart reader: field order, boundaries, preambles and malformed bodies."""

from __future__ import annotations

import httpx
import pytest

from toolrun.api.bodies import multipart_parts
from toolrun.core.errors import InvalidInput


def _encoded(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[str, bytes]:
    request = httpx.Request("POST", "http://x/", data=fields, files=files)
    return request.headers["content-type"], request.read()


@pytest.mark.parametrize("data", [b"", b"x", b"\r\n--not-the-end\r\n" * 3, bytes(range(256)) * 9])
def test_parts_are_cut_out_exactly(data: bytes) -> None:
    content_type, body = _encoded({"index": "7"}, {"chunk": ('we"ird\r\nname', data)})
    parts = multipart_parts(content_type, body)
    assert body[parts["chunk"].start : parts["chunk"].end] == data
    assert body[parts["index"].start : parts["index"].end] == b"7"


@pytest.mark.parametrize("chunk_first", [False, True], ids=["index-first", "chunk-first"])
@pytest.mark.parametrize("size", [64 * 1024 - 1, 64 * 1024, 3 * 1024 * 1024 + 5])
def test_large_chunks_in_either_order_with_an_epilogue(chunk_first: bool, size: int) -> None:
    data = (b"\r\n--" + bytes(range(256))) * (size // 260) + b"\r\n-" * (size % 260 // 3)
    chunk_part = (
        b'--bnd\r\nContent-Disposition: form-data; name="chunk"; filename="c"\r\n\r\n'
        + data
        + b"\r\n"
    )
    index_part = b'--bnd\r\nContent-Disposition: form-data; name="index"\r\n\r\n12\r\n'
    middle = chunk_part + index_part if chunk_first else index_part + chunk_part
    body = middle + b"--bnd--\r\nan epilogue\r\n"
    parts = multipart_parts("multipart/form-data; boundary=bnd", body)
    assert body[parts["chunk"].start : parts["chunk"].end] == data
    assert body[parts["index"].start : parts["index"].end] == b"12"


def test_file_before_field_and_a_preamble() -> None:
    body = (
        b"preamble to ignore\r\n--b0undary\r\n"
        b'Content-Disposition: form-data; name="chunk"; filename="c"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\nDATA\r\n"
        b'--b0undary\r\nContent-Disposition: form-data; name="index"\r\n\r\n3\r\n'
        b"--b0undary--\r\n"
    )
    parts = multipart_parts('multipart/form-data; boundary="b0undary"', body)
    assert body[parts["chunk"].start : parts["chunk"].end] == b"DATA"
    assert parts["chunk"].filename == "c"
    assert body[parts["index"].start : parts["index"].end] == b"3"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b"{}"),
        ("multipart/form-data", b"--x\r\n"),
        ("multipart/form-data; boundary=x", b"no boundary here"),
        ("multipart/form-data; boundary=x", b'--x\r\nContent-Disposition: form-data; name="a"'),
        (
            "multipart/form-data; boundary=x",
            b'--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue',
        ),
        ("multipart/form-data; boundary=x", b"--xjunk"),
    ],
)
def test_malformed_bodies_are_400(content_type: str, body: bytes) -> None:
    with pytest.raises(InvalidInput):
        multipart_parts(content_type, body)
