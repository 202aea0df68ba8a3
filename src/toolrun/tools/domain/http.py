"""The guarded fetcher as the domain tools open it.

A worker (or a test) may put an ``ssl.SSLContext`` in ``ctx.services["ssl_context"]``
to replace the default trust store; verification itself is never switched off.

Otherwise every fetcher shares one default context, built on first use: loading the
certifi bundle takes 20-130 ms of CPU (measured on the 2-core bench machine), which a
fresh context per run would spend again each time, blocking the event loop meanwhile.
An ``SSLContext`` may serve any number of connections at once.
"""

from __future__ import annotations

import functools
import ssl

from toolrun.config import Settings
from toolrun.net.fetch import Fetcher, default_ssl_context
from toolrun.tools.base import ToolContext


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The default trust store (certifi), loaded once per process."""
    return default_ssl_context()


def open_fetcher(settings: Settings, ctx: ToolContext | None = None) -> Fetcher:
    """A ``Fetcher`` for ``settings``, with the context's TLS trust store if it has one."""
    context = ctx.services.get("ssl_context") if ctx is not None else None
    if not isinstance(context, ssl.SSLContext):
        context = shared_ssl_context()
    return Fetcher(settings, ssl_context=context)
