"""BodyDecoder hands out bounded output: a bomb is never inflated past what is asked for."""

from __future__ import annotations

import gzip

import pytest

from tests.servers.http import brotli_bomb, gzip_bomb, zstd_bomb
from toolrun.net.decoding import CHUNK, BodyDecoder
from toolrun.net.errors import BadResponse

MIB = 1 << 20


@pytest.mark.parametrize(
    ("encoding", "bomb"), [("gzip", gzip_bomb), ("br", brotli_bomb), ("zstd", zstd_bomb)]
)
def test_decoder_output_per_read_is_bounded(encoding: str, bomb) -> None:
    decoder = BodyDecoder(encoding)
    decoder.feed(bomb())  # the whole bomb at once: 256 MiB if inflated
    sizes = [len(decoder.read(CHUNK)) for _ in range(20)]
    assert all(0 < size <= 4 * MIB for size in sizes)
    assert sum(sizes) < 64 * MIB


def test_decoder_reads_a_bomb_to_the_end_in_bounded_steps() -> None:
    decoder = BodyDecoder("gzip")
    decoder.feed(gzip_bomb(16 * MIB))
    total = 0
    while chunk := decoder.read(CHUNK):
        assert len(chunk) <= CHUNK
        total += len(chunk)
    decoder.finish()
    assert total == 16 * MIB


def test_decoder_joins_gzip_members_fed_in_small_pieces() -> None:
    wire = gzip.compress(b"first ") + gzip.compress(b"second")
    decoder = BodyDecoder("gzip")
    output = b""
    for index in range(len(wire)):
        decoder.feed(wire[index : index + 1])
        while chunk := decoder.read(3):
            output += chunk
    decoder.finish()
    assert output == b"first second"


def test_decoder_reports_a_cut_stream() -> None:
    decoder = BodyDecoder("gzip")
    decoder.feed(gzip.compress(b"x" * 1000)[:-12])
    while decoder.read():
        pass
    with pytest.raises(BadResponse, match="cut short"):
        decoder.finish()
