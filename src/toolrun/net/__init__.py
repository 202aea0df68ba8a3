"""Outbound network access, always through the guard.

``fetch`` (HTTP), ``tcp`` (plain TCP), ``resolve`` (lookups) and ``dns``
resolve names themselves, check every address against ``addresses`` and
connect only to the addresses they checked. ``errors`` holds what they raise.
"""
