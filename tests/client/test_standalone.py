"""The client package stands alone: importing it loads nothing else of toolrun."""

from __future__ import annotations

import json
import subprocess
import sys

import toolrun.client

PROBE = (
    "import json, sys\n"
    "import toolrun.client, toolrun.client.commands\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith('toolrun'))))\n"
)


def test_importing_the_client_loads_only_the_client() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    assert [name for name in loaded if not name.startswith("toolrun.client")] == ["toolrun"]


def test_the_public_names_are_exported() -> None:
    for name in toolrun.client.__all__:
        assert getattr(toolrun.client, name) is not None
    assert {"Client", "AsyncClient", "ApiError", "JobFailed", "RateLimited"} <= set(
        toolrun.client.__all__
    )
