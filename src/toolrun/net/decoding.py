"""Content-Encoding decoders that never produce much more than asked for.

A decompression bomb turns a few KiB on the wire into GiB; so each decoder
hands out output in bounded steps (``read(n)``) and the fetcher stops pulling
once the byte cap is passed, long before the bomb is spent.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import brotli  # type: ignore[import-untyped]  # ships no type information
import zstandard

from toolrun.net.errors import BadResponse

CHUNK = 64 * 1024
# zstd has no output bound per call: feed it slices small enough that even an
# all-RLE slice (about 32768x) cannot expand past a few MiB.
_ZSTD_SLICE = 64


class _Stage:
    """One decoding step: ``feed`` input, then ``read`` output until it returns b''."""

    name = "identity"

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> None:
        self._pending += data

    def read(self, size: int) -> bytes:
        data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def finish(self) -> None:
        """Called at the end of input; raise BadResponse if the stream is cut short."""


class _Zlib(_Stage):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self._decoder: zlib._Decompress | None = None

    def _start(self) -> zlib._Decompress:
        if self.name == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        # "deflate" should be zlib-wrapped, but servers also send raw deflate.
        head = self._pending[:2]
        wrapped = len(head) == 2 and head[0] & 0x0F == 8 and int.from_bytes(head) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def read(self, size: int) -> bytes:
        output = b""
        while not output and self._pending:
            if self._decoder is None:
                if self.name == "deflate" and len(self._pending) < 2:
                    break
                self._decoder = self._start()
            output = self._decoder.decompress(self._pending, size)
            self._pending = self._decoder.unconsumed_tail
            if self._decoder.eof:
                rest = self._decoder.unused_data
                # A gzip body may hold several members; anything else after the end is ignored.
                self._decoder = None
                self._pending = rest if self.name == "gzip" and rest[:2] == b"\x1f\x8b" else b""
        return output

    def finish(self) -> None:
        if self._decoder is not None and not self._decoder.eof:
            raise zlib.error("truncated stream")


class _Brotli(_Stage):
    name = "br"

    def __init__(self) -> None:
        super().__init__()
        self._decoder = brotli.Decompressor()

    def read(self, size: int) -> bytes:
        if self._decoder.can_accept_more_data():
            if not self._pending:
                return b""
            data, self._pending = self._pending, b""
            return bytes(self._decoder.process(data, output_buffer_limit=size))
        return bytes(self._decoder.process(b"", output_buffer_limit=size))

    def finish(self) -> None:
        if not self._decoder.is_finished():
            raise brotli.error("truncated stream")


class _Zstd(_Stage):
    name = "zstd"

    def __init__(self) -> None:
        super().__init__()
        self._decoder = zstandard.ZstdDecompressor().decompressobj()

    def read(self, size: int) -> bytes:
        output = bytearray()
        while self._pending and len(output) < size:
            piece, self._pending = self._pending[:_ZSTD_SLICE], self._pending[_ZSTD_SLICE:]
            output += self._decoder.decompress(piece)
            if self._decoder.eof:
                rest = self._decoder.unused_data + self._pending
                self._decoder = zstandard.ZstdDecompressor().decompressobj()
                self._pending = rest
        return bytes(output)


_STAGES: dict[str, Callable[[], _Stage]] = {
    "gzip": lambda: _Zlib("gzip"),
    "x-gzip": lambda: _Zlib("gzip"),
    "deflate": lambda: _Zlib("deflate"),
    "br": _Brotli,
    "zstd": _Zstd,
}


class BodyDecoder:
    """Undo a ``Content-Encoding`` list (e.g. ``"gzip"``, ``"gzip, br"``) step by step."""

    def __init__(self, content_encoding: str | None) -> None:
        names = [n.strip().lower() for n in (content_encoding or "").split(",") if n.strip()]
        # Unknown codings pass through as they are, as httpx does.
        self._stages = [_STAGES[n]() for n in reversed(names) if n in _STAGES] or [_Stage()]

    def feed(self, data: bytes) -> None:
        """Add bytes received from the wire."""
        self._stages[0].feed(data)

    def read(self, size: int = CHUNK) -> bytes:
        """Decoded output, about ``size`` bytes at most; b'' when more input is needed."""
        try:
            return self._read(len(self._stages) - 1, size)
        except (zlib.error, brotli.error, zstandard.ZstdError) as error:
            raise BadResponse(f"the response body is not valid {self._name(error)}") from None

    def finish(self) -> None:
        """Check that every stage ended cleanly, once all input was fed and read."""
        try:
            for stage in self._stages:
                stage.finish()
        except (zlib.error, brotli.error, zstandard.ZstdError):
            raise BadResponse("the compressed response body is cut short") from None

    def _read(self, index: int, size: int) -> bytes:
        stage = self._stages[index]
        while True:
            output = stage.read(size)
            if output or index == 0:
                return output
            upstream = self._read(index - 1, CHUNK)
            if not upstream:
                return b""
            stage.feed(upstream)

    def _name(self, error: Exception) -> str:
        if isinstance(error, brotli.error):
            return "brotli"
        if isinstance(error, zstandard.ZstdError):
            return "zstd"
        return "gzip/deflate"
