"""The guarded fetcher as the domain tools open it.

A worker (or a test) may put an ``ssl.SSLContext`` in ``ctx.services["ssl_context"]``
to replace the default trust store; verification itself is never switched off.
Otherwise every fetcher shares the process's default context (``default_ssl_context``).
"""

from __future__ import annotations

import ssl

from toolrun.config import Settings
from toolrun.net.fetch import Fetcher, default_ssl_context
from toolrun.tools.base import ToolContext


def open_fetcher(settings: Settings, ctx: ToolContext | None = None) -> Fetcher:
    """A ``Fetcher`` for ``settings``, with the context's TLS trust store if it has one."""
    context = ctx.services.get("ssl_context") if ctx is not None else None
    if not isinstance(context, ssl.SSLContext):
        context = default_ssl_context()
    return Fetcher(settings, ssl_context=context)
