"""The agent-tool server: every catalog action as a Model Context Protocol tool (official ``mcp`` SDK).

Calls go through the HTTP API with the caller's key, never around it, so
credits, idempotency and rate limits are exactly the API's.

    server.py    the SDK server: lists the tools, routes each call
    tools.py     the tools: one per registry entry, plus upload and credits tools
    calls.py     what a call does (create the job and wait; upload; credits)
    replies.py   results and errors as MCP tool results
    progress.py  MCP progress notifications while a call waits
    uploads.py   upload by local path or by base64 content
    access.py    the API client of a call: remote (stdio) or in-process (``/mcp``)
    stdio.py     ``toolrun mcp``
    http.py      the ``/mcp`` endpoint the API mounts (streamable HTTP)
"""
