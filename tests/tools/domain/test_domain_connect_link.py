"""domain-connect-link: signing byte for byte against the published vectors, verified like a DNS provider."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from toolrun.config import Settings
from toolrun.tools.base import InputRejected, ToolContext
from toolrun.tools.domain import domainconnect as dc
from toolrun.tools.domain.domain_connect_link import (
    DEFINITION,
    DomainConnectInput,
    DomainConnectStored,
    prepare,
    run,
)

DATA = Path(__file__).parents[2] / "data" / "domain"
KEY_PEM = (DATA / "domainconnect-test-key.pem").read_text()
KNOWN_ANSWER = json.loads((DATA / "domainconnect-known-answer.json").read_text())

# domainconnect_python test_generate_sig_params (reference §1.1 vector A)
VECTOR_A_QUERY = "domain=connect.domains&RANDOMTEXT=shm%3A1552462554%3AHola&IP=132.148.25.185"
VECTOR_A_SUFFIX = (
    "&sig=pDgKCqDX%2BYafD8fqchYjayZt6bgf5ncz%2FJlYVGV0SbZrcUPb5tgMyqpn4g%2BlY%2FigpgKYFhkXGcAeNOrQ0aiTu31bLo7ODkK2fWsdz4G"
    "%2BpSa5Lkb7NhwS07o6cpQMcvO8aihA7pU5%2BIbPd3Im1ncUNol3zfjeyAl%2BaBkfcXOAl2xnWY8NobMzaI0jqVwPnWperRj5VGfX6vu5mPviDF"
    "zcS0RvruRAHv08X8zDp%2BBvCnpk4L1cWn49%2FZceS8Hifo7%2FkVd4j%2BdFGvze7H4cGZ2Kx6ZrSShW3a7AwvV6cVGxqn%2FdQlpYYsHBHlv9Z"
    "bhe2pKuqpAhB%2FxDN2G%2FjQaDqmcWGw%3D%3D&key=_dck1"
)
# domainconnect_python test_get_domain_connect_template_sync_url_with_signature
VECTOR_SYNC_URL = (
    "https://domainconnect.1and1.com/sync/v2/domainTemplates/providers/exampleservice.domainconnect.org"
    "/services/template2/apply?IP=132.148.25.185&RANDOMTEXT=shm%3A1531371203%3AHejo&domain=connect.domains&host="
    "&sig=liU8sl6t%2Bl8YmwVG1mvJPN18wxJ9z448%2FGd4LymL6MTOEBsVSZ1qHuVR0m1km9R4H8vsB%2B89suxIBXCmsQNK34hrBe4NeNWxC"
    "h3kbF9cWFFMZKk94HYcPcWUkip0UYcJzI5WMAVqhHulnWAi8yJj%2FqfoNhsVskUdKlx8ng3gIxLsiZxKcFUVgoYnBxg2v92QLEHKcs9OB"
    "oT%2FRUkfpeQTxQOAxukQ2SXDy4lOiTQnUr7rHZ2cJElDK60dY1tLebVtbeL1JduEwtgAPyqZ9gmHzl%2B50QK%2Fm%2BA6r95VaSPWyxb"
    "S3n3s6xF3Z1PYgmEHOxECh5jT5yb9zXGrKcpkjlQkog%3D%3D&key=_dck1"
)
# the spec's example (reference §1.1 vector C): the signature begins and ends like this
VECTOR_C_QUERY = "a=1&b=2&ip=10.10.10.10&domain=example.net"


@pytest.fixture
def key() -> rsa.RSAPrivateKey:
    return dc.load_rsa_private_key(KEY_PEM)


def settings() -> Settings:
    return Settings(allow_private_networks=True, _env_file=None)


def context() -> ToolContext:
    return ToolContext(
        settings=settings(),
        job_id="job",
        account_id="account",
        deadline_at=datetime.now(UTC) + timedelta(seconds=60),
    )


def payload(**overrides: object) -> DomainConnectInput:
    body: dict[str, object] = {
        "domain": "connect.domains",
        "host": "www",
        "providerId": "exampleservice.domainconnect.org",
        "serviceId": "template2",
        "syncUxUrl": "https://domainconnect.1and1.com/sync",
        "keyName": "_dck1",
        "privateKey": KEY_PEM,
        "redirectUri": "https://app.example.net/done?x=1",
        "params": [
            {"key": "IP", "value": "132.148.25.185"},
            {"key": "RANDOMTEXT", "value": "shm:1531371203:Hejo world"},
        ],
    }
    body.update(overrides)
    return DomainConnectInput.model_validate(body)


def provider_verify(url: str, txt_records: list[str]) -> bool:
    """What DomainConnectApplyZone does: filter sig/key from the raw query, rebuild the key, verify."""
    query = urlsplit(url).query
    pairs = query.split("&")
    sig = next(unquote(p[4:]) for p in pairs if p.startswith("sig="))
    data = "&".join(p for p in pairs if not p.startswith(("sig=", "key=")))
    chunks = {}
    for record in txt_records:
        fields = dict(item.split("=", 1) for item in record.split(","))
        assert fields.get("a", "RS256") == "RS256"
        chunks[int(fields["p"])] = fields["d"]
    pem = (
        "-----BEGIN PUBLIC KEY-----\n"
        + "".join(chunks[i] for i in sorted(chunks))
        + "\n-----END PUBLIC KEY-----\n"
    )
    public_key = serialization.load_pem_public_key(pem.encode())
    assert isinstance(public_key, rsa.RSAPublicKey)
    try:
        public_key.verify(base64.b64decode(sig), data.encode(), padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, ValueError):  # ValueError: the sig no longer decodes as base64
        return False
    return True


def test_vector_a_suffix_is_byte_identical(key):
    signature = dc.sign(VECTOR_A_QUERY, key)
    assert dc.signature_suffix(signature, "_dck1") == VECTOR_A_SUFFIX


def test_sync_url_vector_is_byte_identical(key):
    signed = "IP=132.148.25.185&RANDOMTEXT=shm%3A1531371203%3AHejo&domain=connect.domains&host="
    url = dc.apply_url(
        "https://domainconnect.1and1.com/sync",
        "exampleservice.domainconnect.org",
        "template2",
        signed + dc.signature_suffix(dc.sign(signed, key), "_dck1"),
    )
    assert url == VECTOR_SYNC_URL


def test_known_answer_signature_and_public_key(key):
    assert dc.sign(KNOWN_ANSWER["signedQuery"], key) == KNOWN_ANSWER["signatureBase64"]
    assert dc.public_key_base64(key) == KNOWN_ANSWER["publicKeyBase64"]


def test_spec_example_signature_prefix(key):
    signature = dc.sign(VECTOR_C_QUERY, key)
    assert signature.startswith("V2te9zWMU7G3")
    assert dc.signature_suffix(signature, "k").endswith("SHgJq9%2FXoMTTw%3D%3D&key=k")


def test_txt_records_fit_one_string_and_rebuild_the_key(key):
    records = dc.txt_records(dc.public_key_base64(key))
    assert all(len(r.encode()) <= 255 for r in records)
    assert "".join(r.split("d=", 1)[1] for r in records) == KNOWN_ANSWER["publicKeyBase64"]


async def test_prepare_signs_and_a_provider_accepts_it():
    stored = await prepare(payload(), settings())
    result = await run(stored, context())
    assert provider_verify(result.url, result.public_key_records)
    query = urlsplit(result.url).query
    assert query == result.signed_query + "&sig=" + query.split("&sig=")[1]
    assert query.endswith("&key=_dck1")
    assert result.signed_query == (
        "domain=connect.domains&host=www&IP=132.148.25.185&RANDOMTEXT=shm%3A1531371203%3AHejo+world"
        "&redirect_uri=https%3A%2F%2Fapp.example.net%2Fdone%3Fx%3D1"
    )
    assert result.url.startswith(
        "https://domainconnect.1and1.com/sync/v2/domainTemplates/providers/"
        "exampleservice.domainconnect.org/services/template2/apply?"
    )
    assert result.template_supported is None


async def test_apex_host_is_left_out():
    stored = await prepare(payload(host=""), settings())
    assert stored.signed_query.startswith("domain=connect.domains&IP=")


async def test_pkcs8_key_is_accepted(key):
    pkcs8 = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    stored = await prepare(payload(privateKey=pkcs8), settings())
    result = await run(stored, context())
    assert provider_verify(result.url, result.public_key_records)


async def test_private_key_is_never_stored_or_returned():
    stored = await prepare(payload(), settings())
    assert isinstance(stored, DomainConnectStored)
    dumped = stored.model_dump_json(by_alias=True)
    result = (await run(stored, context())).model_dump_json(by_alias=True)
    for text in (dumped, result, repr(payload())):
        assert "PRIVATE KEY" not in text
        assert "MIIEow" not in text
    assert "privateKey" not in DomainConnectStored.model_json_schema(by_alias=True)["properties"]
    assert DEFINITION.stored_model is DomainConnectStored


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda q: q.replace("IP=132.148.25.185", "IP=132.148.25.186"), False),
        (
            lambda q: (
                "&".join(reversed(q.split("&sig=")[0].split("&"))) + "&sig=" + q.split("&sig=")[1]
            ),
            False,
        ),
        (lambda q: q.replace("%2B", "-").replace("%2F", "_"), False),
        (lambda q: q, True),
    ],
    ids=["changed-value", "reordered-unsigned", "urlsafe-base64", "untouched"],
)
async def test_provider_side_verification(mutate, expected):
    stored = await prepare(payload(), settings())
    result = await run(stored, context())
    base, query = result.url.split("?", 1)
    assert provider_verify(base + "?" + mutate(query), result.public_key_records) is expected


async def test_unencoded_plus_in_signature_fails_verification():
    stored = await prepare(payload(), settings())
    result = await run(stored, context())
    raw = result.url.replace("%2B", "+")
    if raw == result.url:
        pytest.skip("this signature has no '+'")
    # a framework turns '+' into a space: the signature no longer decodes to the same bytes
    base, query = raw.split("?", 1)
    assert not provider_verify(base + "?" + query.replace("+", "%20"), result.public_key_records)


def _ec_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _small_rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _encrypted_pem() -> str:
    key = dc.load_rsa_private_key(KEY_PEM)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    ).decode()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"privateKey": "not a key"}, "privateKey"),
        (
            {"privateKey": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"},
            "privateKey",
        ),
        ({"privateKey": _ec_pem()}, "privateKey"),
        ({"privateKey": _small_rsa_pem()}, "privateKey"),
        ({"privateKey": _encrypted_pem()}, "privateKey"),
        ({"syncUxUrl": "ftp://provider.example/sync"}, "syncUxUrl"),
        ({"syncUxUrl": "http://provider.example/sync"}, "syncUxUrl"),
        ({"syncUxUrl": "https://user:pw@provider.example/sync"}, "syncUxUrl"),
        ({"syncUxUrl": "https://provider.example/sync?a=1"}, "syncUxUrl"),
        ({"syncUxUrl": "/sync"}, "syncUxUrl"),
        ({"apiUrl": "https://[::1/x"}, "apiUrl"),
        ({"redirectUri": "javascript:alert(1)"}, "redirectUri"),
        ({"redirectUri": "app.example.net/done"}, "redirectUri"),
        ({"domain": "not a domain"}, "domain"),
        ({"host": "bad host"}, "host"),
        ({"keyName": "two.labels"}, "keyName"),
        ({"providerId": "a/b"}, "providerId"),
        ({"params": [{"key": "domain", "value": "x"}]}, "params"),
        ({"params": [{"key": "sig", "value": "x"}]}, "params"),
        ({"params": [{"key": "IP", "value": "1"}, {"key": "IP", "value": "2"}]}, "params"),
    ],
)
async def test_bad_input_is_rejected_at_creation(overrides, field):
    with pytest.raises(InputRejected) as caught:
        await prepare(payload(**overrides), settings())
    assert caught.value.field == field
    assert "MIIE" not in caught.value.message


def test_definition_shape():
    assert DEFINITION.slug == DEFINITION.action == "domain-connect-link"
    assert DEFINITION.kind == "tool"
    assert DEFINITION.category == "domain"
    assert DEFINITION.aliases == ("domain-connect",)
    DomainConnectInput.model_validate(DEFINITION.example)


@pytest.mark.parametrize(("status", "supported"), [(200, True), (404, False), (500, None)])
async def test_template_support_is_checked_with_api_url(https_server, status, supported):
    path = "/v2/domainTemplates/providers/exampleservice.domainconnect.org/services/template2"
    https_server.route(
        path, status=status, body=b"{}", headers=[("Content-Type", "application/json")]
    )
    stored = await prepare(payload(apiUrl=https_server.url("/")), settings())
    ctx = context()
    ctx = ToolContext(
        settings=ctx.settings,
        job_id=ctx.job_id,
        account_id=ctx.account_id,
        deadline_at=ctx.deadline_at,
        services={"ssl_context": https_server.client_ssl_context()},
    )
    result = await run(stored, ctx)
    assert result.template_supported is supported
    assert result.template_check_url == https_server.url(path)
    assert https_server.requests[-1].path == path
