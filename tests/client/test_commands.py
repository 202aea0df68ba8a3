"""The client commands as a script would run them (``python -m toolrun.client``).

The same commands are registered on the operator CLI (``toolrun call ...``)
through ``toolrun.client.commands.register``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.client.server import Server, closed_udp_port

pytestmark = pytest.mark.slow

COMMAND = [sys.executable, "-m", "toolrun.client"]


def run(
    args: list[str], server: Server, key: str, *, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**server.env, "TOOLRUN_BASE_URL": server.base_url, "TOOLRUN_API_KEY": key}
    done = subprocess.run(
        [*COMMAND, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def test_call_credits_and_jobs_print_json(server: Server, api_key: str) -> None:
    args = ["call", "dns-lookup", "--field", "domain=example.test", "--field", 'types=["A"]']
    job = json.loads(run([*args, "--json"], server, api_key).stdout)
    assert job["status"] == "succeeded"
    assert job["result"]["records"][0]["value"] == "192.0.2.10"

    credits = json.loads(run(["credits", "--json"], server, api_key).stdout)
    assert credits["balance"] == 9

    listed = json.loads(run(["jobs", "--json"], server, api_key).stdout)
    assert [item["id"] for item in listed["items"]] == [job["id"]]


def test_human_output_and_input_json(server: Server, api_key: str) -> None:
    done = run(
        ["call", "dns-lookup", "--input", '{"domain": "example.test", "types": ["MX"]}'],
        server,
        api_key,
    )
    assert "dns-lookup succeeded" in done.stderr
    assert "10 mail.example.test." in done.stdout
    assert "balance: 9 credits" in run(["credits"], server, api_key).stdout
    assert "dns-lookup" in run(["jobs"], server, api_key).stdout


def test_upload_prints_the_asset(server: Server, api_key: str, tmp_path: Path) -> None:
    image = tmp_path / "dot.png"
    Image.new("RGB", (20, 10), "red").save(image)
    asset = json.loads(run(["upload", str(image), "--json"], server, api_key).stdout)
    assert (asset["kind"], asset["width"], asset["height"]) == ("uploaded", 20, 10)
    assert asset["fileSize"] == image.stat().st_size


@pytest.mark.parametrize(
    ("args", "key", "message"),
    [
        (["credits"], "trk_wrong", "401: "),
        (["call", "dns-lookup", "--field", "domain=example.test"], None, "400: "),
        (["call", "dns-lookup", "--input", "[1]"], None, "--input must be a JSON object"),
        (["call", "dns-lookup", "--field", "nonsense"], None, "expected NAME=VALUE"),
    ],
)
def test_errors_go_to_stderr_with_exit_code_1(
    server: Server, api_key: str, args: list[str], key: str | None, message: str
) -> None:
    done = run(args, server, key or api_key, ok=False)
    assert done.returncode == 1
    assert message in done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_a_failed_job_exits_1_with_its_error(server: Server, api_key: str) -> None:
    field = f'nameservers=["127.0.0.1:{closed_udp_port()}"]'
    args = ["call", "dns-lookup", "-f", "domain=example.test", "-f", 'types=["A"]', "-f", field]
    done = run(args, server, api_key, ok=False)
    assert done.returncode == 1
    assert "dns-lookup failed" in done.stderr
    assert "credit refunded" in done.stderr


def test_missing_key_is_reported(server: Server) -> None:
    env = {k: v for k, v in server.env.items() if k != "TOOLRUN_API_KEY"}
    done = subprocess.run(
        [*COMMAND, "credits"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert "TOOLRUN_API_KEY" in done.stderr


def test_register_adds_the_commands_to_a_typer_app() -> None:
    import typer
    from typer.testing import CliRunner

    from toolrun.client.commands import register

    app = typer.Typer()
    register(app)
    names = {command.name for command in app.registered_commands}
    assert names == {"call", "upload", "image", "credits", "jobs"}
    assert "--field" in CliRunner().invoke(app, ["call", "--help"]).output
