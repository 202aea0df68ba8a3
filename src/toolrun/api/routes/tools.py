"""Per-tool execute routes, the catalog and the v1 aliases, all generated from the registry.

No ``from __future__ import annotations`` here: each execute route's body type
is a closure variable that FastAPI must see as a real class to document it.
"""

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Body, Request
from starlette.responses import Response

from toolrun.api.deps import Context, CurrentAccount, KeyedRoute
from toolrun.api.envelope import ok
from toolrun.api.routes.jobs import get_job
from toolrun.api.schemas import CREATE_RESPONSES, ERROR_RESPONSES, Envelope, ErrorEnvelope, JobData
from toolrun.api.submission import IdempotencyKeyHeader, submit, validate_payload
from toolrun.core.errors import InvalidInput, NotFound
from toolrun.tools.base import ToolDefinition
from toolrun.tools.registry import Registry

V1_VENDOR = "toolrun"


def catalog_item(definition: ToolDefinition) -> dict[str, Any]:
    return {
        "slug": definition.slug,
        "name": definition.name,
        "category": definition.category,
        "description": definition.description,
        "creditCost": 1,
        "method": "POST",
        "path": definition.path,
        "inputSchema": definition.input_model.model_json_schema(by_alias=True),
        "outputSchema": definition.output_model.model_json_schema(by_alias=True),
    }


def _execute_route(definition: ToolDefinition) -> Any:
    input_model = definition.input_model

    async def execute(
        account: CurrentAccount,
        context: Context,
        body: Annotated[input_model, Body()],  # type: ignore[valid-type]
        idempotency_key: IdempotencyKeyHeader = None,
    ) -> Response:
        return await submit(
            context,
            account=account,
            definition=definition,
            payload=body,
            idempotency_key=idempotency_key,
        )

    execute.__doc__ = f"{definition.description}\n\nCosts 1 credit; answers 202 with the job."
    execute.__name__ = f"execute_{definition.slug.replace('-', '_')}"
    return execute


def build_router(registry: Registry) -> APIRouter:
    router = APIRouter(responses=ERROR_RESPONSES, route_class=KeyedRoute)
    for definition in registry:
        router.add_api_route(
            definition.path,
            _execute_route(definition),
            methods=["POST"],
            status_code=202,
            response_model=Envelope[JobData],
            responses=CREATE_RESPONSES,
            tags=[definition.category],
            summary=definition.name,
        )
    router.add_api_route("/openapi/tools", list_tools, methods=["GET"], tags=["catalog"])
    router.add_api_route(
        "/openapi/tools/{slug}",
        tool_detail,
        methods=["GET"],
        tags=["catalog"],
        responses={404: {"model": ErrorEnvelope, "description": "no tool with this slug"}},
    )
    router.add_api_route(
        "/openapi/v1/tools/{vendor}/{tool}/execute",
        execute_v1,
        methods=["POST"],
        status_code=202,
        include_in_schema=False,
    )
    router.add_api_route(
        "/openapi/v1/jobs/{job_id}", get_job, methods=["GET"], include_in_schema=False
    )
    return router


async def list_tools(account: CurrentAccount, context: Context) -> Response:
    """The public catalog: every tool and image action with its input and output schemas."""
    return ok({"items": [catalog_item(definition) for definition in context.registry]})


async def tool_detail(slug: str, account: CurrentAccount, context: Context) -> Response:
    """One catalog entry, with an example request body."""
    definition = context.registry.by_slug(slug)
    if definition is None:
        raise NotFound(f"no tool named {slug!r}; GET /openapi/tools lists them")
    return ok({**catalog_item(definition), "example": dict(definition.example)})


async def execute_v1(
    vendor: str,
    tool: str,
    request: Request,
    account: CurrentAccount,
    context: Context,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Response:
    """The reference form `/openapi/v1/tools/toolrun/<tool>/execute` (DESIGN §5)."""
    definition = context.registry.by_alias(tool) if vendor == V1_VENDOR else None
    if definition is None or definition.kind != "tool":
        raise NotFound(f"no tool {vendor}/{tool}")
    try:
        raw = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        raise InvalidInput("request body is not valid JSON", field="body") from None
    variant = None
    if definition.v1_input_model is not None and definition.v1_to_input is not None:
        v1_payload = validate_payload(definition.v1_input_model, raw)
        payload = definition.v1_to_input(v1_payload)
        variant = "v1"
    else:
        payload = validate_payload(definition.input_model, raw)
    return await submit(
        context,
        account=account,
        definition=definition,
        payload=payload,
        idempotency_key=idempotency_key,
        variant=variant,
    )
