"""Domain Connect synchronous-flow apply URLs, signed as DNS providers verify them.

The rule (Domain Connect spec 2.3, "Digitally Sign Requests", and the reference
libraries ``domainconnect_python`` and ``DomainConnectApplyZone``):

- the query is built once, every key and value percent-encoded (``urlencode``:
  ``quote_plus``, so ``:`` -> ``%3A``, space -> ``+``), pairs joined by ``&``;
- the signed bytes are exactly that query text, UTF-8, without ``sig`` and ``key``;
- the signature is RSA PKCS#1 v1.5 over SHA-256, standard base64 (``+/=``), itself
  percent-encoded; ``&sig=<sig>&key=<keyName>`` is appended last, ``sig`` first.

A provider splits the received query on ``&``, drops the ``sig=`` and ``key=``
pairs, re-joins the rest in order and verifies it with the public key it reads from
the TXT records ``p=N,a=RS256,d=<chunk>`` at ``<keyName>.<syncPubKeyDomain>``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

MIN_RSA_BITS = 2048
TXT_CHUNK_CHARS = 200  # each record's d= chunk; the whole record stays well under 255 bytes
RESERVED_PARAMS = frozenset(
    {"domain", "host", "redirect_uri", "state", "groupId", "providerName", "serviceName"}
    | {"sig", "key"}
)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$")
_KEY_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$")


class SigningError(ValueError):
    """The input cannot make a signed link; ``field`` names the input field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class SignedLink:
    """An apply URL and the parts a caller may want to check."""

    url: str
    query: str  # the whole query, sig and key included
    signed_query: str  # the exact bytes signed
    signature: str  # standard base64
    public_key: str  # base64 DER SubjectPublicKeyInfo, as published in TXT


def load_rsa_private_key(pem: str) -> rsa.RSAPrivateKey:
    """An unencrypted RSA private key (PKCS#1 or PKCS#8 PEM) of at least 2048 bits."""
    text = pem.strip()
    if "-----BEGIN" not in text or "PRIVATE KEY-----" not in text:
        raise SigningError(
            "privateKey", "must be a PEM private key (-----BEGIN ... PRIVATE KEY-----)"
        )
    if "ENCRYPTED" in text:
        raise SigningError(
            "privateKey", "encrypted private keys are not accepted; send it unencrypted"
        )
    try:
        key = serialization.load_pem_private_key(text.encode("ascii", "replace"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise SigningError("privateKey", "is not a readable PEM private key") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise SigningError("privateKey", "must be an RSA key (Domain Connect signs with RS256)")
    if key.key_size < MIN_RSA_BITS:
        raise SigningError("privateKey", f"RSA key must have at least {MIN_RSA_BITS} bits")
    return key


def check_base_url(value: str, field: str) -> str:
    """An absolute https URL with a host and no query, fragment or user info; no trailing ``/``."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        raise SigningError(field, "is not a valid URL") from None
    if parts.scheme.lower() != "https" or not parts.hostname:
        raise SigningError(field, "must be an absolute https:// URL")
    if parts.username is not None or parts.password is not None:
        raise SigningError(field, "must not contain user info")
    if parts.query or parts.fragment:
        raise SigningError(field, "must not have a query or fragment")
    del port
    return value.strip().rstrip("/")


def check_redirect_uri(value: str) -> str:
    """An absolute http(s) URL with a host; the provider returns the user to it."""
    try:
        parts = urlsplit(value.strip())
        _ = parts.port
    except ValueError:
        raise SigningError("redirectUri", "is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise SigningError("redirectUri", "must be an absolute http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise SigningError("redirectUri", "must not contain user info")
    return value.strip()


def check_identifier(value: str, field: str) -> str:
    """A provider or service id: letters, digits, ``.``, ``_``, ``-``."""
    if not _ID.match(value):
        raise SigningError(field, "may hold only letters, digits, '.', '_' and '-'")
    return value


def check_key_name(value: str) -> str:
    """The host label of the public-key TXT record (``_dck1``)."""
    if not _KEY_NAME.match(value):
        raise SigningError("keyName", "must be one DNS label (letters, digits, '_' and '-')")
    return value


def build_query(
    *,
    domain: str,
    host: str,
    params: Sequence[tuple[str, str]],
    redirect_uri: str | None,
) -> str:
    """The query to sign: domain, host (only when set), template variables, redirect_uri."""
    pairs: list[tuple[str, str]] = [("domain", domain)]
    if host:
        pairs.append(("host", host))
    pairs.extend(params)
    if redirect_uri:
        pairs.append(("redirect_uri", redirect_uri))
    return urlencode(pairs)


def sign(query: str, key: rsa.RSAPrivateKey) -> str:
    """RS256 over the UTF-8 bytes of ``query``, standard base64."""
    signature = key.sign(query.encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
    return base64.b64encode(signature).decode("ascii")


def signature_suffix(signature: str, key_name: str) -> str:
    """``&sig=<percent-encoded base64>&key=<keyName>``: what follows the signed query."""
    return "&" + urlencode([("sig", signature), ("key", key_name)])


def public_key_base64(key: rsa.RSAPrivateKey) -> str:
    """The base64 DER SubjectPublicKeyInfo of ``key`` (what the TXT chunks spell out)."""
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode("ascii")


def txt_records(public_key: str) -> list[str]:
    """``p=1,a=RS256,d=...`` records, one chunk each, to publish at ``keyName.syncPubKeyDomain``."""
    chunks = [
        public_key[i : i + TXT_CHUNK_CHARS] for i in range(0, len(public_key), TXT_CHUNK_CHARS)
    ]
    return [f"p={n},a=RS256,d={chunk}" for n, chunk in enumerate(chunks, start=1)]


def apply_url(sync_ux_url: str, provider_id: str, service_id: str, query: str) -> str:
    """``{urlSyncUX}/v2/domainTemplates/providers/{providerId}/services/{serviceId}/apply?{query}``."""
    path = (
        f"/v2/domainTemplates/providers/{quote(provider_id, safe='')}"
        f"/services/{quote(service_id, safe='')}/apply"
    )
    return f"{sync_ux_url.rstrip('/')}{path}?{query}"


def template_url(api_url: str, provider_id: str, service_id: str) -> str:
    """The URL that answers 200 when the provider supports the template, 404 when not."""
    return (
        f"{api_url.rstrip('/')}/v2/domainTemplates/providers/{quote(provider_id, safe='')}"
        f"/services/{quote(service_id, safe='')}"
    )


def signed_link(
    *,
    sync_ux_url: str,
    provider_id: str,
    service_id: str,
    domain: str,
    host: str,
    params: Sequence[tuple[str, str]],
    redirect_uri: str | None,
    key_name: str,
    key: rsa.RSAPrivateKey,
) -> SignedLink:
    """The signed apply URL for the given template and variables."""
    signed_query = build_query(domain=domain, host=host, params=params, redirect_uri=redirect_uri)
    signature = sign(signed_query, key)
    query = signed_query + signature_suffix(signature, key_name)
    return SignedLink(
        url=apply_url(sync_ux_url, provider_id, service_id, query),
        query=query,
        signed_query=signed_query,
        signature=signature,
        public_key=public_key_base64(key),
    )
