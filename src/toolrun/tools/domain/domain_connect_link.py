"""domain-connect-link: a signed Domain Connect synchronous-flow apply URL.

Validation and signing happen in ``prepare`` at job creation: a bad PEM, a key
that is not RSA, a bad URL or a clashing parameter is refused there (400, no job,
no charge), and the stored payload is the signed link *without* the private key,
which is never stored, logged or returned. ``run`` only reports the link and,
when ``apiUrl`` is given, whether the provider says it supports the template.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from toolrun.config import Settings
from toolrun.net.errors import NetError
from toolrun.tools.base import InputRejected, ToolContext, ToolDefinition
from toolrun.tools.domain import domainconnect as dc
from toolrun.tools.domain.http import open_fetcher
from toolrun.tools.domain.models import CamelModel
from toolrun.tools.domain.names import normalise_domain

MAX_PARAMS = 50


class TemplateParam(CamelModel):
    """One template variable: ``%key%`` in the template takes ``value``."""

    key: str = Field(min_length=1, max_length=64)
    value: str = Field(max_length=2048)


class DomainConnectInput(CamelModel):
    """What a Service Provider supplies to build a signed apply link."""

    domain: str = Field(min_length=1, max_length=253, description="Root domain (the zone).")
    host: str = Field(max_length=253, description="Sub-domain label(s); empty for the apex.")
    provider_id: str = Field(min_length=1, max_length=255, description="Template providerId.")
    service_id: str = Field(min_length=1, max_length=255, description="Template serviceId.")
    sync_ux_url: str = Field(
        min_length=1, max_length=2048, description="The DNS provider's urlSyncUX."
    )
    api_url: str | None = Field(
        default=None, max_length=2048, description="The provider's urlAPI: checks template support."
    )
    key_name: str = Field(
        min_length=1, max_length=63, description="Host label of the public-key TXT record."
    )
    private_key: SecretStr = Field(
        description="RSA private key, PEM (PKCS#1 or PKCS#8), unencrypted."
    )
    redirect_uri: str = Field(
        min_length=1, max_length=2048, description="Where the provider sends the user back."
    )
    params: list[TemplateParam] = Field(
        max_length=MAX_PARAMS, description="Template variables, in URL order."
    )


class DomainConnectStored(CamelModel):
    """The stored job payload: the validated input and its signature, no private key."""

    domain: str
    host: str
    provider_id: str
    service_id: str
    sync_ux_url: str
    api_url: str | None
    key_name: str
    redirect_uri: str
    params: list[TemplateParam]
    url: str
    signed_query: str
    signature: str
    public_key: str


class DomainConnectResult(CamelModel):
    """The signed link, what was signed, and the records that publish the public key."""

    url: str = Field(description="The apply URL to open in the user's browser.")
    domain: str
    host: str
    provider_id: str
    service_id: str
    redirect_uri: str
    key_name: str
    params: list[TemplateParam]
    signed_query: str = Field(description="The exact query text that was signed.")
    signature: str = Field(
        description="Standard base64 RS256 signature (percent-encoded in the URL)."
    )
    signature_algorithm: Literal["RS256"] = "RS256"
    public_key: str = Field(description="Base64 DER SubjectPublicKeyInfo of the signing key.")
    public_key_records: list[str] = Field(
        description="TXT records to publish at <keyName>.<syncPubKeyDomain>, one string each."
    )
    template_check_url: str | None = None
    template_supported: bool | None = Field(
        default=None, description="From GET {apiUrl}/v2/domainTemplates/...: null when not checked."
    )
    template_check: str | None = None


def _check_params(params: list[TemplateParam]) -> list[tuple[str, str]]:
    seen: set[str] = set()
    pairs = []
    for param in params:
        if param.key in dc.RESERVED_PARAMS:
            raise InputRejected("params", f"{param.key!r} is a reserved Domain Connect parameter")
        if param.key in seen:
            raise InputRejected("params", f"{param.key!r} is given twice")
        seen.add(param.key)
        pairs.append((param.key, param.value))
    return pairs


def _check_host(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    for label in host.split(".") if host else []:
        if not label or len(label) > 63 or not all(c.isalnum() or c in "-_" for c in label):
            raise InputRejected("host", "must be DNS labels (letters, digits, '-', '_') or empty")
    return host


async def prepare(payload: DomainConnectInput, settings: Settings) -> DomainConnectStored:
    """Validate everything and sign; the stored model carries no private key."""
    try:
        domain = normalise_domain(payload.domain)
    except ValueError as exc:
        raise InputRejected("domain", str(exc)) from None
    host = _check_host(payload.host)
    pairs = _check_params(payload.params)
    try:
        sync_ux_url = dc.check_base_url(payload.sync_ux_url, "syncUxUrl")
        api_url = dc.check_base_url(payload.api_url, "apiUrl") if payload.api_url else None
        redirect_uri = dc.check_redirect_uri(payload.redirect_uri)
        provider_id = dc.check_identifier(payload.provider_id, "providerId")
        service_id = dc.check_identifier(payload.service_id, "serviceId")
        key_name = dc.check_key_name(payload.key_name)
        key = dc.load_rsa_private_key(payload.private_key.get_secret_value())
    except dc.SigningError as exc:
        raise InputRejected(exc.field, exc.message) from None
    link = dc.signed_link(
        sync_ux_url=sync_ux_url,
        provider_id=provider_id,
        service_id=service_id,
        domain=domain,
        host=host,
        params=pairs,
        redirect_uri=redirect_uri,
        key_name=key_name,
        key=key,
    )
    return DomainConnectStored(
        domain=domain,
        host=host,
        provider_id=provider_id,
        service_id=service_id,
        sync_ux_url=sync_ux_url,
        api_url=api_url,
        key_name=key_name,
        redirect_uri=redirect_uri,
        params=payload.params,
        url=link.url,
        signed_query=link.signed_query,
        signature=link.signature,
        public_key=link.public_key,
    )


async def check_template(url: str, ctx: ToolContext) -> tuple[bool | None, str]:
    """Ask the provider's API whether it supports the template (200 yes, 404 no)."""
    try:
        async with open_fetcher(ctx.settings, ctx) as fetcher:
            result = await fetcher.fetch(
                url, max_bytes=256 * 1024, accept="application/json", truncate=True
            )
    except NetError as exc:
        return None, f"could not check: {exc.message}"
    if result.status_code == 200:
        return True, "the DNS provider supports this template"
    if result.status_code == 404:
        return False, "the DNS provider does not support this template (404)"
    return None, f"the DNS provider answered HTTP {result.status_code}"


async def run(payload: DomainConnectStored, ctx: ToolContext) -> DomainConnectResult:
    """Report the link signed at creation; check template support when ``apiUrl`` is set."""
    check_url = supported = note = None
    if payload.api_url:
        check_url = dc.template_url(payload.api_url, payload.provider_id, payload.service_id)
        supported, note = await check_template(check_url, ctx)
    return DomainConnectResult(
        url=payload.url,
        domain=payload.domain,
        host=payload.host,
        provider_id=payload.provider_id,
        service_id=payload.service_id,
        redirect_uri=payload.redirect_uri,
        key_name=payload.key_name,
        params=payload.params,
        signed_query=payload.signed_query,
        signature=payload.signature,
        public_key=payload.public_key,
        public_key_records=dc.txt_records(payload.public_key),
        template_check_url=check_url,
        template_supported=supported,
        template_check=note,
    )


DEFINITION = ToolDefinition(
    slug="domain-connect-link",
    kind="tool",
    action="domain-connect-link",
    category="domain",
    name="Domain Connect link",
    description=(
        "Builds a Domain Connect synchronous-flow apply URL signed with your RSA key "
        "(RS256, as DNS providers verify it). The key is used once at creation and never stored."
    ),
    input_model=DomainConnectInput,
    output_model=DomainConnectResult,
    stored_model=DomainConnectStored,
    prepare=prepare,
    run=run,
    example={
        "domain": "example.com",
        "host": "www",
        "providerId": "exampleservice.domainconnect.org",
        "serviceId": "template1",
        "syncUxUrl": "https://domainconnect.provider.example/sync",
        "keyName": "_dck1",
        "privateKey": "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        "redirectUri": "https://app.example.net/connected",
        "params": [{"key": "IP", "value": "192.0.2.10"}],
    },
    aliases=("domain-connect",),
)
