"""The operator's commands (DESIGN §4). Data goes to stdout, messages to stderr."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from fastapi import FastAPI

from toolrun.api.app import create_app
from toolrun.api.context import AppContext
from toolrun.client.commands import register as register_client_commands
from toolrun.client.connection import MissingApiKey
from toolrun.config import ConfigError, Settings, load_settings
from toolrun.core import accounts, keys
from toolrun.core.clock import isoformat, system_clock
from toolrun.core.errors import ServiceError
from toolrun.db.engine import Database
from toolrun.db.migrate import upgrade
from toolrun.storage import open_storage
from toolrun.tools.registry import default_registry
from toolrun.worker.assets import worker_services
from toolrun.worker.loop import Worker, run_until_stopped
from toolrun.worker.sweeper import sweeper_task

T = TypeVar("T")

app = typer.Typer(
    help="toolrun: credit-metered website, domain and image tools as asynchronous jobs.",
    no_args_is_help=True,
    add_completion=False,
)
accounts_app = typer.Typer(
    help="Create, register, disable and enable accounts.", no_args_is_help=True
)
keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
app.add_typer(accounts_app, name="accounts")
app.add_typer(keys_app, name="keys")

JsonOption = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=1)


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        raise _fail(str(exc)) from None


def _with_database(work: Callable[[Database, Settings], Awaitable[T]]) -> T:
    """Migrate, then run ``work`` with a database; service errors become a message and exit 1."""
    settings = _settings()

    async def main() -> T:
        await upgrade(settings.resolved_database_url)
        database = Database(settings.resolved_database_url, pool_size=1, max_overflow=1)
        try:
            return await work(database, settings)
        finally:
            await database.dispose()

    try:
        return asyncio.run(main())
    except ServiceError as exc:
        raise _fail(exc.message) from None


def _print_json(data: dict[str, Any]) -> None:
    typer.echo(json.dumps(data))


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr)


# --- service ----------------------------------------------------------------------------------


def in_process_worker(context: AppContext) -> Worker:
    """The workers `serve` runs beside the API, sharing its database and wake-up."""
    return Worker(
        settings=context.settings,
        db=context.db,
        registry=context.registry,
        concurrency=context.settings.job_workers,
        clock=context.clock,
        wakeup=context.services["wakeup"],
        services={
            **context.services,
            **worker_services(
                db=context.db,
                storage=context.services["storage"],
                settings=context.settings,
                clock=context.clock,
            ),
        },
        maintenance=[sweeper_task(context.db, context.services["storage"], context.clock)],
    )


def app_factory() -> FastAPI:
    """Entry point for uvicorn's ``--factory`` (each HTTP worker process builds its own app)."""
    return create_app(load_settings(), job_runner=in_process_worker)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8080,
    http_workers: Annotated[int, typer.Option(min=1, help="HTTP worker processes")] = 1,
    job_workers: Annotated[
        int | None,
        typer.Option(min=0, help="jobs run at once per process (0 = none); TOOLRUN_JOB_WORKERS"),
    ] = None,
) -> None:
    """Apply migrations and serve the API (and run jobs in-process unless --job-workers 0)."""
    import uvicorn

    os.environ.setdefault("TOOLRUN_PUBLIC_BASE_URL", f"http://{host}:{port}")
    if job_workers is not None:
        os.environ["TOOLRUN_JOB_WORKERS"] = str(job_workers)
    settings = _settings()
    configure_logging(settings.log_level)
    asyncio.run(upgrade(settings.resolved_database_url))
    typer.echo(f"toolrun serving on http://{host}:{port}", err=True)
    uvicorn.run(
        "toolrun.cli:app_factory",
        factory=True,
        host=host,
        port=port,
        workers=http_workers,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=30,
    )


@app.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="jobs run at once (default TOOLRUN_JOB_WORKERS)")
    ] = None,
) -> None:
    """Run jobs only (scale-out): claim, run, renew leases, reap; SIGTERM stops gracefully."""
    settings = _settings()
    configure_logging(settings.log_level)

    async def main() -> None:
        await upgrade(settings.resolved_database_url)
        database = Database(settings.resolved_database_url)
        storage = open_storage(settings)
        try:
            job_worker = Worker(
                settings=settings,
                db=database,
                registry=default_registry(),
                concurrency=concurrency or settings.job_workers or 1,
                services=worker_services(
                    db=database, storage=storage, settings=settings, clock=system_clock
                ),
                maintenance=[sweeper_task(database, storage, system_clock)],
            )
            await run_until_stopped(job_worker)
        finally:
            await storage.aclose()
            await database.dispose()

    asyncio.run(main())


@app.command("mcp")
def mcp_server() -> None:
    """Serve the agent-tool server (MCP) on stdin/stdout: TOOLRUN_API_KEY, TOOLRUN_BASE_URL."""
    from toolrun.mcp.stdio import remote_api, serve_stdio  # the MCP SDK is slow to import

    try:
        api = remote_api()
    except MissingApiKey as exc:
        raise _fail(str(exc)) from None
    configure_logging("WARNING")
    asyncio.run(serve_stdio(api))


@app.command()
def migrate() -> None:
    """Apply pending database migrations."""
    settings = _settings()
    asyncio.run(upgrade(settings.resolved_database_url))
    typer.echo("database is up to date", err=True)


# --- accounts ---------------------------------------------------------------------------------


@accounts_app.command("create")
def accounts_create(
    name: Annotated[str | None, typer.Option(help="a name to recognise the account by")] = None,
    anonymous: Annotated[
        bool, typer.Option("--anonymous", help="an anonymous trial account")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Create an account with one API key (shown once) and its first credits."""

    async def work(database: Database, settings: Settings) -> accounts.NewAccount:
        async with database.write() as session:
            return await accounts.create_account(
                session, settings=settings, now=system_clock(), name=name, anonymous=anonymous
            )

    created = _with_database(work)
    data = {"accountId": created.account.id, "keyId": created.key.key.id, "apiKey": created.key.raw}
    if as_json:
        _print_json(data)
        return
    kind = "anonymous account" if anonymous else "account"
    typer.echo(f"{kind} {created.account.id} created with {created.account.balance} credits")
    typer.echo(f"key id:  {created.key.key.id}")
    typer.echo(f"API key: {created.key.raw}")
    typer.echo("the API key is shown only this once: store it now", err=True)


@accounts_app.command("register")
def accounts_register(account_id: str) -> None:
    """Turn an anonymous account into a registered one (grants the signup credits)."""

    async def work(database: Database, settings: Settings) -> None:
        async with database.write() as session:
            await accounts.register(
                session, account_id=account_id, settings=settings, now=system_clock()
            )

    _with_database(work)
    typer.echo(f"account {account_id} registered", err=True)


def _set_disabled(account_id: str, disabled: bool) -> None:
    async def work(database: Database, settings: Settings) -> None:
        async with database.write() as session:
            await accounts.set_disabled(session, account_id=account_id, disabled=disabled)

    _with_database(work)
    typer.echo(f"account {account_id} {'disabled' if disabled else 'enabled'}", err=True)


@accounts_app.command("disable")
def accounts_disable(account_id: str) -> None:
    """Disable an account: every one of its keys gets 401 until it is enabled."""
    _set_disabled(account_id, True)


@accounts_app.command("enable")
def accounts_enable(account_id: str) -> None:
    """Enable a disabled account."""
    _set_disabled(account_id, False)


# --- keys -------------------------------------------------------------------------------------


@keys_app.command("create")
def keys_create(
    account_id: str,
    expires_in_days: Annotated[
        int | None, typer.Option(min=1, help="the key stops working after this many days")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Create another API key for an account (shown once)."""

    async def work(database: Database, settings: Settings) -> keys.NewKey:
        async with database.write() as session:
            return await keys.create_key(
                session, account_id=account_id, now=system_clock(), expires_in_days=expires_in_days
            )

    created = _with_database(work)
    if as_json:
        _print_json({"keyId": created.key.id, "apiKey": created.raw})
        return
    typer.echo(f"key id:  {created.key.id}")
    typer.echo(f"API key: {created.raw}")
    typer.echo("the API key is shown only this once: store it now", err=True)


@keys_app.command("list")
def keys_list(account_id: str, as_json: JsonOption = False) -> None:
    """List an account's keys (their prefixes, never the keys)."""

    async def work(database: Database, settings: Settings) -> list[dict[str, Any]]:
        async with database.read() as session:
            found = await keys.list_keys(session, account_id=account_id)
        now = system_clock()
        return [
            {
                "keyId": key.id,
                "prefix": key.prefix,
                "createdAt": isoformat(key.created_at),
                "expiresAt": isoformat(key.expires_at) if key.expires_at else None,
                "revokedAt": isoformat(key.revoked_at) if key.revoked_at else None,
                "active": key.revoked_at is None
                and (key.expires_at is None or key.expires_at > now),
            }
            for key in found
        ]

    items = _with_database(work)
    if as_json:
        _print_json({"accountId": account_id, "items": items})
        return
    for item in items:
        state = "active" if item["active"] else ("revoked" if item["revokedAt"] else "expired")
        typer.echo(f"{item['keyId']}  {item['prefix']}…  {state}  created {item['createdAt']}")


@keys_app.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke a key: it gets 401 from now on."""

    async def work(database: Database, settings: Settings) -> None:
        async with database.write() as session:
            await keys.revoke_key(session, key_id=key_id, now=system_clock())

    _with_database(work)
    typer.echo(f"key {key_id} revoked", err=True)


# the HTTP client commands (call, upload, image, credits, jobs) after the operator's own
register_client_commands(app)


def main() -> None:
    app()
