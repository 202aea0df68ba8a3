"""Structured data: JSON-LD parse errors, types and their required properties."""

from __future__ import annotations

from typing import Any

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site
from toolrun.tools.web.structured_data import IDENTITY_TYPES


def check_structured_data(site: Site) -> Check:
    data = site.structured
    entities: list[dict[str, Any]] = [
        {"type": "/".join(e.types), "missing": e.missing, "properties": len(e.data)}
        for e in data.entities
    ]
    value = {
        "blocks": data.blocks,
        "types": data.types,
        "entities": entities[:50],
        "errors": data.errors,
        "microdataTypes": data.microdata_types[:20],
    }
    if data.errors:
        return make(
            "structured-data",
            "Structured data has errors",
            "fail",
            value,
            "; ".join(data.errors[:5]) + ".",
            "Fix the JSON syntax of each application/ld+json block.",
        )
    if not data.entities:
        detail = "No JSON-LD structured data"
        if data.microdata_types:
            detail += f" (microdata types: {', '.join(data.microdata_types[:5])})"
        return make(
            "structured-data",
            "No JSON-LD structured data",
            "warn",
            value,
            detail + ".",
            "Describe the page with schema.org JSON-LD (Organization, WebSite, Article, "
            "Product, FAQPage, BreadcrumbList ...).",
        )
    incomplete = [e for e in entities if e["missing"]]
    if incomplete:
        listed = "; ".join(f"{e['type']} lacks {', '.join(e['missing'])}" for e in incomplete[:5])
        return make(
            "structured-data",
            "Structured data lacks required properties",
            "warn",
            value,
            listed + ".",
            "Add the required properties to each entity.",
        )
    return make(
        "structured-data",
        "Structured data is valid",
        "pass",
        value,
        f"{plural(len(entities), 'entity', 'entities')}: {', '.join(data.types[:10])}.",
    )


def check_identity(site: Site) -> Check:
    identities = site.json_ld.of_type(*IDENTITY_TYPES)
    if not identities:
        return make(
            "identity-schema",
            "No Organization or Person schema",
            "warn",
            None,
            "AI answers and knowledge panels rely on an explicit identity for the site.",
            "Add Organization (or Person) JSON-LD with name, url, logo and sameAs.",
        )
    same_as: list[str] = []
    for entity in identities:
        links = entity.data.get("sameAs")
        same_as += (
            [links] if isinstance(links, str) else [x for x in links or [] if isinstance(x, str)]
        )
    value = {"types": [e.types[0] for e in identities], "sameAs": same_as[:20]}
    if not same_as:
        return make(
            "identity-schema",
            "Identity schema has no sameAs links",
            "warn",
            value,
            "sameAs links (Wikipedia, Wikidata, LinkedIn ...) tie the entity to known profiles.",
            "Add sameAs URLs to the Organization/Person entity.",
        )
    return make(
        "identity-schema",
        "Identity schema with sameAs",
        "pass",
        value,
        f"{plural(len(same_as), 'sameAs link')}.",
    )


STRUCTURED_CHECKS = (check_structured_data,)
