"""The catalog of actions: one ``ToolDefinition`` per tool module, looked up by slug or alias.

Names register all-or-nothing: a slug, a (kind, action) pair or an alias used
twice is refused when the registry is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from toolrun.tools.base import Kind, ToolDefinition


class RegistryClash(Exception):
    """Two definitions claim the same slug, action or alias."""


class Registry:
    """Definitions by slug, by (kind, action) and by v1 alias name."""

    def __init__(self, definitions: Iterable[ToolDefinition]) -> None:
        by_slug: dict[str, ToolDefinition] = {}
        by_action: dict[tuple[Kind, str], ToolDefinition] = {}
        by_alias: dict[str, ToolDefinition] = {}
        for definition in definitions:
            action = (definition.kind, definition.action)
            clashes = [definition.slug] if definition.slug in by_slug else []
            clashes += [f"{action}"] if action in by_action else []
            clashes += [a for a in (definition.slug, *definition.aliases) if a in by_alias]
            if clashes:
                raise RegistryClash(f"{clashes[0]!r} is claimed by two tools")
            by_slug[definition.slug] = definition
            by_action[(definition.kind, definition.action)] = definition
            for alias in (definition.slug, *definition.aliases):
                by_alias[alias] = definition
        self._by_slug = by_slug
        self._by_action = by_action
        self._by_alias = by_alias

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._by_slug.values())

    def __len__(self) -> int:
        return len(self._by_slug)

    def by_slug(self, slug: str) -> ToolDefinition | None:
        return self._by_slug.get(slug)

    def by_action(self, kind: str, action: str) -> ToolDefinition | None:
        return self._by_action.get((kind, action))  # type: ignore[arg-type]

    def by_alias(self, name: str) -> ToolDefinition | None:
        return self._by_alias.get(name)


def default_definitions() -> list[ToolDefinition]:
    """Every tool of the service, in catalog order."""
    from toolrun.tools.domain import (
        dns_lookup,
        domain_connect_link,
        rdap_lookup,
        setup_checker,
        vendor_lookup,
        whois_lookup,
    )
    from toolrun.tools.image import DEFINITIONS as IMAGE_DEFINITIONS
    from toolrun.tools.web import geo_checker, link_preview, meta_checker, seo_checker

    return [
        meta_checker.DEFINITION,
        seo_checker.DEFINITION,
        geo_checker.DEFINITION,
        link_preview.DEFINITION,
        dns_lookup.DEFINITION,
        whois_lookup.DEFINITION,
        rdap_lookup.DEFINITION,
        vendor_lookup.DEFINITION,
        domain_connect_link.DEFINITION,
        setup_checker.DEFINITION,
        *IMAGE_DEFINITIONS,
    ]


def default_registry() -> Registry:
    return Registry(default_definitions())
