"""Client commands for the ``toolrun`` CLI: call, upload, image, credits, jobs.

``register(app)`` adds them to a Typer app (the operator CLI adds them to its
own); ``python -m toolrun.client`` runs them alone. Data goes to stdout (one
JSON object with ``--json``), messages and progress to stderr; an error prints
the server's message and exits 1.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

from toolrun.client import render
from toolrun.client.connection import MissingApiKey
from toolrun.client.errors import ApiError, JobFailed
from toolrun.client.models import Job
from toolrun.client.sync import Client

T = TypeVar("T")

ApiKeyOption = Annotated[
    str | None, typer.Option("--api-key", help="API key (default: TOOLRUN_API_KEY)")
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url", help="API address (default: TOOLRUN_BASE_URL or http://127.0.0.1:8080)"
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]
InputOption = Annotated[
    str | None, typer.Option("--input", help="the job's input as a JSON object")
]
FieldOption = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        "-f",
        help="NAME=VALUE, repeatable; VALUE is read as JSON when it parses (--field 'types=[\"A\"]')",
    ),
]

stdout = Console(highlight=False, emoji=False)
stderr = Console(stderr=True, highlight=False, emoji=False)


def _fail(message: str) -> typer.Exit:
    stderr.print(f"error: {message}")
    return typer.Exit(code=1)


def _guarded(work: Callable[[], T]) -> T:
    """Run ``work``; client errors become a message on stderr and exit code 1."""
    try:
        return work()
    except JobFailed as exc:
        raise _fail(render.job_line(exc.job)) from None
    except ApiError as exc:
        raise _fail(f"{exc.code}: {exc.message}") from None
    except (MissingApiKey, ValueError, OSError) as exc:
        raise _fail(str(exc)) from None


@contextmanager
def _spinner(text: str) -> Iterator[Callable[[Job], None]]:
    """A spinner on stderr (terminals only) whose text follows the job's status."""
    if not stderr.is_terminal:
        yield lambda job: None
        return
    with stderr.status(text) as status:
        yield lambda job: status.update(f"{text}: {job.status}")


def _run_job(client: Client, create: Callable[[str], Job], label: str) -> Job:
    key = str(uuid.uuid4())  # one key for the creation and all its retries: never charged twice
    job = create(key)
    with _spinner(label) as follow:
        job = client.wait(job, follow)
    if job.status != "succeeded":
        raise JobFailed.of(job)
    return job


def _payload(raw_input: str | None, fields: list[str] | None) -> dict[str, Any]:
    return render.parse_fields(raw_input, fields or [])


def call(
    tool: Annotated[str, typer.Argument(help="tool slug, e.g. dns-lookup or seo-checker")],
    raw_input: InputOption = None,
    field: FieldOption = None,
    as_json: JsonOption = False,
    api_key: ApiKeyOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Run a tool (1 credit, refunded if it fails) and print its result."""

    def work() -> Job:
        payload = _payload(raw_input, field)
        with Client(base_url, api_key) as client:
            return _run_job(
                client,
                lambda key: client.execute(tool, payload, idempotency_key=key),
                f"running {tool}",
            )

    job = _guarded(work)
    if as_json:
        typer.echo(render.dump(job))
        return
    stderr.print(render.job_line(job))
    render.show_result(stdout, job)


def image(
    action: Annotated[str, typer.Argument(help="convert, compress, resize, crop or ico")],
    task_id: Annotated[
        str | None, typer.Option("--task-id", help="the uploaded asset to work on")
    ] = None,
    raw_input: InputOption = None,
    field: FieldOption = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="save the generated file here")
    ] = None,
    as_json: JsonOption = False,
    api_key: ApiKeyOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Run an image action on an uploaded asset; --output downloads the generated file."""

    def work() -> tuple[Job, Path | None]:
        payload = _payload(raw_input, field)
        if task_id is not None:
            payload["taskId"] = task_id
        with Client(base_url, api_key) as client:
            job = _run_job(
                client,
                lambda key: client.image(action, payload, idempotency_key=key),
                f"running image {action}",
            )
            generated = (job.result or {}).get("taskId")
            if output is None or not isinstance(generated, str):
                return job, None
            return job, client.download(generated, "output", output)

    job, saved = _guarded(work)
    if as_json:
        data = job.model_dump(mode="json", by_alias=True)
        if saved is not None:
            data["savedTo"] = str(saved)
        typer.echo(render.dump(data))
        return
    stderr.print(render.job_line(job))
    render.show_result(stdout, job)
    if saved is not None:
        stderr.print(f"saved to {saved}")


def upload(
    file: Annotated[Path, typer.Argument(help="the image file to upload")],
    chunk_size: Annotated[
        int | None, typer.Option("--chunk-size", min=1, help="bytes per chunk (the server decides)")
    ] = None,
    mime_type: Annotated[
        str | None, typer.Option("--mime-type", help="default: guessed from the file name")
    ] = None,
    as_json: JsonOption = False,
    api_key: ApiKeyOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Upload an image in chunks (free); run it again to resume an interrupted upload."""
    columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, console=stderr, disable=not stderr.is_terminal) as bar:
        task = bar.add_task("upload", total=None)

        def advance(sent: int, total: int) -> None:
            bar.update(task, completed=sent, total=total)

        def work() -> Any:
            with Client(base_url, api_key) as client:
                return client.upload(file, chunk_size, mime_type, advance)

        asset = _guarded(work)
    if as_json:
        typer.echo(render.dump(asset))
        return
    render.show_asset(stdout, asset)


def credits(
    as_json: JsonOption = False, api_key: ApiKeyOption = None, base_url: BaseUrlOption = None
) -> None:
    """Show the balance and the daily check-in state."""

    def work() -> Any:
        with Client(base_url, api_key) as client:
            return client.credits()

    summary = _guarded(work)
    if as_json:
        typer.echo(render.dump(summary))
        return
    render.show_credits(stdout, summary)


def jobs(
    as_json: JsonOption = False, api_key: ApiKeyOption = None, base_url: BaseUrlOption = None
) -> None:
    """List the latest 50 jobs, newest first."""

    def work() -> list[Job]:
        with Client(base_url, api_key) as client:
            return client.jobs()

    found = _guarded(work)
    if as_json:
        items = [job.model_dump(mode="json", by_alias=True) for job in found]
        typer.echo(render.dump({"items": items}))
        return
    render.show_jobs(stdout, found)


def register(app: typer.Typer) -> None:
    """Add the client commands (call, upload, image, credits, jobs) to ``app``."""
    app.command("call")(call)
    app.command("upload")(upload)
    app.command("image")(image)
    app.command("credits")(credits)
    app.command("jobs")(jobs)


def standalone_app() -> typer.Typer:
    """The client commands alone, for ``python -m toolrun.client``."""
    app = typer.Typer(
        help="toolrun client: run tools, upload images and read credits over the HTTP API.",
        no_args_is_help=True,
        add_completion=False,
    )
    register(app)
    return app
