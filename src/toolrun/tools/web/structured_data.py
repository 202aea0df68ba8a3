"""JSON-LD: extraction, ``@graph`` flattening, types and their required properties.

Required properties combine geo-optimizer's ``SCHEMA_ORG_REQUIRED`` with the
properties Google Search documents as required for its rich results; subtypes
inherit their parent's list (``BlogPosting`` is checked as an ``Article``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Each entry: alternatives are "a|b" (any one of them satisfies the requirement).
REQUIRED: dict[str, tuple[str, ...]] = {
    "Article": ("headline", "author"),
    "WebSite": ("name", "url"),
    "WebPage": ("name",),
    "WebApplication": ("name", "url"),
    "SoftwareApplication": ("name",),
    "Organization": ("name", "url"),
    "LocalBusiness": ("name", "address"),
    "Person": ("name",),
    "FAQPage": ("mainEntity",),
    "QAPage": ("mainEntity",),
    "Question": ("name", "acceptedAnswer|suggestedAnswer"),
    "BreadcrumbList": ("itemListElement",),
    "Product": ("name", "offers|review|aggregateRating"),
    "Offer": ("price|priceSpecification",),
    "Event": ("name", "startDate", "location"),
    "Recipe": ("name", "image"),
    "HowTo": ("name", "step"),
    "VideoObject": ("name", "thumbnailUrl", "uploadDate"),
    "ImageObject": ("contentUrl|url",),
    "JobPosting": ("title", "description", "datePosted", "hiringOrganization"),
    "Course": ("name", "description"),
    "Review": ("itemReviewed", "author", "reviewRating"),
}
PARENT: dict[str, str] = {
    "BlogPosting": "Article",
    "NewsArticle": "Article",
    "TechArticle": "Article",
    "ScholarlyArticle": "Article",
    "Report": "Article",
    "AboutPage": "WebPage",
    "ContactPage": "WebPage",
    "CollectionPage": "WebPage",
    "ItemPage": "WebPage",
    "ProfilePage": "WebPage",
    "Corporation": "Organization",
    "NGO": "Organization",
    "NewsMediaOrganization": "Organization",
    "OnlineStore": "Organization",
    "Restaurant": "LocalBusiness",
    "Store": "LocalBusiness",
    "MobileApplication": "SoftwareApplication",
    "WebApplication": "SoftwareApplication",
}
IDENTITY_TYPES = frozenset({"Organization", "Person", "LocalBusiness"})
_SCHEMA_PREFIX = re.compile(r"^(?:https?://)?(?:www\.)?schema\.org/|^schema:", re.I)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@dataclass
class Entity:
    """One typed JSON-LD node and the required properties it lacks."""

    types: list[str]
    data: dict[str, Any]
    missing: list[str] = field(default_factory=list)

    @property
    def base_types(self) -> set[str]:
        return {base_type(t) for t in self.types} | set(self.types)


@dataclass
class StructuredData:
    """All JSON-LD of a page: blocks, parse errors and typed entities (top level and ``@graph``)."""

    blocks: int
    errors: list[str]
    entities: list[Entity]
    microdata_types: list[str]

    @property
    def types(self) -> list[str]:
        seen: dict[str, None] = {}
        for entity in self.entities:
            for kind in entity.types:
                seen.setdefault(kind, None)
        return list(seen)

    def of_type(self, *kinds: str) -> list[Entity]:
        wanted = set(kinds)
        return [e for e in self.entities if e.base_types & wanted]

    def first_value(self, *path: str) -> Any:
        """The first value found at ``path`` in any entity (for link preview fallbacks)."""
        for entity in self.entities:
            value: Any = entity.data
            for key in path:
                if isinstance(value, list):
                    value = value[0] if value else None
                value = value.get(key) if isinstance(value, dict) else None
            if value not in (None, "", []):
                return value
        return None


def base_type(kind: str) -> str:
    return PARENT.get(kind, kind)


def normalize_type(value: str) -> str:
    return _SCHEMA_PREFIX.sub("", value.strip())


def parse_block(text: str) -> Any:
    """Parse one JSON-LD block, tolerating HTML comments, CDATA and trailing commas."""
    cleaned = text.strip()
    for wrapper in (("<!--", "-->"), ("<![CDATA[", "]]>"), ("//<![CDATA[", "//]]>")):
        if cleaned.startswith(wrapper[0]) and cleaned.endswith(wrapper[1]):
            cleaned = cleaned[len(wrapper[0]) : -len(wrapper[1])].strip()
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", cleaned))


def extract(blocks: list[str], microdata_types: list[str] | None = None) -> StructuredData:
    """Parse the JSON-LD ``blocks`` of a page into typed entities."""
    errors: list[str] = []
    entities: list[Entity] = []
    for index, block in enumerate(blocks, start=1):
        if not block.strip():
            errors.append(f"block {index}: empty")
            continue
        try:
            document = parse_block(block)
        except (json.JSONDecodeError, RecursionError) as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
            errors.append(f"block {index}: invalid JSON ({message})")
            continue
        for node in _top_nodes(document):
            types = _types_of(node)
            if types:
                entities.append(Entity(types, node, _missing(types, node)))
    return StructuredData(len(blocks), errors, entities, microdata_types or [])


def _top_nodes(document: Any) -> Iterator[dict[str, Any]]:
    if isinstance(document, list):
        for item in document:
            yield from _top_nodes(item)
    elif isinstance(document, dict):
        graph = document.get("@graph")
        if isinstance(graph, list):
            yield from _top_nodes(graph)
        if "@type" in document:
            yield document


def _types_of(node: dict[str, Any]) -> list[str]:
    raw = node.get("@type")
    values = raw if isinstance(raw, list) else [raw]
    return [normalize_type(v) for v in values if isinstance(v, str) and v.strip()]


def _missing(types: list[str], node: dict[str, Any]) -> list[str]:
    missing: list[str] = []
    for kind in types:
        for requirement in REQUIRED.get(base_type(kind), ()):
            options = requirement.split("|")
            if (
                not any(_present(node.get(option)) for option in options)
                and requirement not in missing
            ):
                missing.append(requirement)
    return missing


def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str | list | dict):
        return bool(value)
    return True
