"""How the client commands show things: one JSON object for scripts, short text for people."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from toolrun.client.models import Asset, CreditSummary, Job


def dump(value: Any) -> str:
    """One line of JSON (models in the API's camelCase)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True)
    return json.dumps(value, ensure_ascii=False)


def parse_fields(raw_input: str | None, fields: list[str]) -> dict[str, Any]:
    """``--input`` (a JSON object) updated by ``--field k=v`` (``v`` as JSON when it parses)."""
    payload: dict[str, Any] = {}
    if raw_input:
        try:
            loaded = json.loads(raw_input)
        except ValueError as exc:
            raise ValueError(f"--input is not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise ValueError("--input must be a JSON object")
        payload.update(loaded)
    for field in fields:
        name, sep, text = field.partition("=")
        if not sep or not name:
            raise ValueError(f"--field {field!r}: expected NAME=VALUE")
        try:
            payload[name] = json.loads(text)
        except ValueError:
            payload[name] = text
    return payload


def job_line(job: Job) -> str:
    """``dns-lookup succeeded (job 6d53…)``, with the error when there is one."""
    line = f"{job.action} {job.status} (job {job.id})"
    if job.error is not None:
        refunded = "; credit refunded" if job.credits_refunded else ""
        line += f": {job.error.code} {job.error.message}{refunded}"
    return line


def show_result(console: Console, job: Job) -> None:
    """A succeeded job's result, pretty-printed."""
    console.print_json(json.dumps(job.result or {}, ensure_ascii=False))


def show_credits(console: Console, summary: CreditSummary) -> None:
    checked = "yes" if summary.checked_in_today else "no"
    console.print(f"balance: {summary.balance} credits")
    console.print(f"checked in today: {checked}; next check-in {summary.next_check_in_at}")
    if summary.is_anonymous:
        console.print(
            f"anonymous trial: {summary.anonymous_spent} of "
            f"{summary.anonymous_spend_limit} credits spent"
        )


def show_jobs(console: Console, jobs: list[Job]) -> None:
    table = Table("created", "id", "action", "status", "error")
    for job in jobs:
        created = job.created_at.isoformat(timespec="seconds") if job.created_at else ""
        error = f"{job.error.code} {job.error.message}" if job.error else ""
        table.add_row(created, job.id, job.action, job.status, error)
    console.print(table)


def show_asset(console: Console, asset: Asset) -> None:
    size = f", {asset.width}x{asset.height}" if asset.width and asset.height else ""
    console.print(f"{asset.file_name}: taskId {asset.task_id} ({asset.mime_type}{size})")
    console.print(f"{asset.file_size} bytes, valid until {asset.expires_at}")
