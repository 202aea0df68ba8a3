"""Web checks: HTTPS with a valid certificate, HTTP -> HTTPS redirect, HSTS (Internet.nl rules)."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from toolrun.net.errors import TlsFailed
from toolrun.tools.domain.models import Check
from toolrun.tools.domain.setup_data import Observations

HSTS_MIN_AGE = 31536000  # one year


def _has_address(o: Observations) -> bool:
    return bool(o.values(o.domain, "A") or o.values(o.domain, "AAAA"))


def https(o: Observations) -> Check:
    """The apex answers over HTTPS with a certificate valid for the name."""
    fetched = o.https
    title = "HTTPS"
    if fetched is None:
        return Check(id="https", title=title, status="info", value=None, detail="Not checked.")
    if fetched.result is not None:
        return Check(
            id="https",
            title=title,
            status="pass",
            value={"url": fetched.url, "statusCode": fetched.result.status_code},
            detail=f"HTTPS answers (HTTP {fetched.result.status_code}) with a valid certificate for {o.domain}.",
        )
    error = fetched.error
    message = error.message if error is not None else "unknown error"
    if isinstance(error, TlsFailed):
        return Check(
            id="https",
            title=title,
            status="fail",
            value={"url": fetched.url, "error": message},
            detail=f"The TLS certificate is not valid for {o.domain}: {message}.",
            recommendation="Install a certificate from a public CA that covers the name (and renew it before expiry).",
        )
    if not _has_address(o):
        return Check(
            id="https",
            title=title,
            status="info",
            value={"url": fetched.url, "error": message},
            detail="The domain has no address, so no website.",
        )
    return Check(
        id="https",
        title=title,
        status="fail",
        value={"url": fetched.url, "error": message},
        detail=f"HTTPS is not reachable: {message}.",
        recommendation="Serve the site over HTTPS on port 443.",
    )


def http_redirect(o: Observations) -> Check:
    """Plain HTTP redirects first to HTTPS on the same host."""
    fetched = o.http
    title = "HTTP to HTTPS redirect"
    if fetched is None or fetched.result is None:
        message = (
            fetched.error.message
            if fetched is not None and fetched.error is not None
            else "not checked"
        )
        return Check(
            id="http-redirect",
            title=title,
            status="info",
            value=None,
            detail=f"Plain HTTP is not served ({message}).",
        )
    result = fetched.result
    location = result.header("location")
    if result.status_code not in (301, 302, 303, 307, 308) or not location:
        return Check(
            id="http-redirect",
            title=title,
            status="fail",
            value={"statusCode": result.status_code},
            detail=f"http://{o.domain}/ answers {result.status_code} without redirecting to HTTPS.",
            recommendation="Redirect every plain HTTP request to https:// with 301 or 308.",
        )
    target = urlsplit(urljoin(fetched.url, location))
    value = {"statusCode": result.status_code, "location": location}
    if target.scheme != "https":
        return Check(
            id="http-redirect",
            title=title,
            status="fail",
            value=value,
            detail=f"The redirect goes to {location}, not HTTPS.",
            recommendation="Redirect to https:// on the same host.",
        )
    if (target.hostname or "").lower() != o.domain:
        return Check(
            id="http-redirect",
            title=title,
            status="warn",
            value=value,
            detail=f"The redirect goes to another host ({target.hostname}) before HTTPS on {o.domain}.",
            recommendation=f"Redirect to https://{o.domain}/ first, then elsewhere, so HSTS applies to {o.domain}.",
        )
    return Check(
        id="http-redirect",
        title=title,
        status="pass",
        value=value,
        detail="Plain HTTP redirects to HTTPS on the same host.",
    )


def hsts(o: Observations) -> Check:
    """The first HTTPS response carries HSTS with max-age of at least one year (RFC 6797 §8.1: first header counts)."""
    fetched = o.https
    title = "HSTS"
    if fetched is None or fetched.result is None:
        return Check(
            id="hsts", title=title, status="info", value=None, detail="No HTTPS response to read."
        )
    header = fetched.result.header("strict-transport-security")
    if header is None:
        return Check(
            id="hsts",
            title=title,
            status="fail",
            value=None,
            detail="No Strict-Transport-Security header.",
            recommendation="Send 'Strict-Transport-Security: max-age=31536000; includeSubDomains'.",
        )
    match = re.search(r"max-age\s*=\s*\"?(\d+)", header, re.I)
    age = int(match[1]) if match else None
    value = {
        "header": header,
        "maxAge": age,
        "includeSubDomains": "includesubdomains" in header.lower(),
        "preload": "preload" in header.lower(),
    }
    if age is None or age < HSTS_MIN_AGE:
        return Check(
            id="hsts",
            title=title,
            status="warn",
            value=value,
            detail=f"HSTS max-age is {age if age is not None else 'missing'}; under one year.",
            recommendation="Use max-age=31536000 or more.",
        )
    return Check(id="hsts", title=title, status="pass", value=value, detail=f"HSTS max-age {age}.")
