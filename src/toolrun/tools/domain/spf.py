"""SPF (RFC 7208) record evaluation without a connecting IP: syntax, limits, loops, policy.

What is checked, as the reference checkers do (checkdmarc, Internet.nl):

- exactly one ``v=spf1`` TXT record at the name (two or more is a permerror);
- every term parses: ``[+-~?]mechanism[:domain][/cidr]`` or ``name=value``;
  ``ip4``/``ip6`` networks must be valid; ``all`` glued to another term is an error;
- DNS-querying terms (``include``, ``a``, ``mx``, ``ptr``, ``exists``, ``redirect``)
  count toward the limit of 10, across the whole include/redirect tree (§4.6.4);
  an ``mx`` term's host lookups have their own limit of 10 and do not count;
- lookups that find nothing (NXDOMAIN or no records) are void; more than 2 is an error;
- an include or redirect that leads back to a record being evaluated is a loop;
- the final policy is the top record's ``all`` (or its redirect target's); no ``all``
  and no ``redirect`` means ``?all`` (neutral). Macros (``%{i}``) are not expanded.

The whole tree is walked even past the limits (bounded by ``HARD_LOOKUP_CAP``), so
the report shows which include uses up the budget.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from toolrun.net.dns import NODATA, NOERROR, NXDOMAIN, DnsAnswer

Lookup = Callable[[str, str], Awaitable[DnsAnswer]]

LOOKUP_LIMIT = 10
VOID_LIMIT = 2
MX_HOST_LIMIT = 10
HARD_LOOKUP_CAP = 40  # stop walking a hostile tree long after the limit is passed
MECHANISMS = frozenset({"all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists"})
COUNTED = frozenset({"include", "a", "mx", "ptr", "exists"})
_TERM = re.compile(r"^([+\-~?]?)([a-z0-9]+)(?::(.*?))?(/\d+)?(//\d+)?$", re.I)
_MODIFIER = re.compile(r"^([a-z][a-z0-9_.-]*)=(.*)$", re.I)


@dataclass
class SpfNode:
    """One record in the include/redirect tree."""

    domain: str
    record: str | None = None
    lookups: int = 0  # terms of this record that query DNS
    void_lookups: int = 0
    all: str | None = None  # "-all", "~all", "?all", "+all"
    redirect: str | None = None
    children: list[SpfNode] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def total_lookups(self) -> int:
        return self.lookups + sum(child.total_lookups() for child in self.children)

    def total_void(self) -> int:
        return self.void_lookups + sum(child.total_void() for child in self.children)

    def all_errors(self) -> list[str]:
        return self.errors + [e for child in self.children for e in child.all_errors()]

    def all_warnings(self) -> list[str]:
        return self.warnings + [w for child in self.children for w in child.all_warnings()]


@dataclass
class SpfReport:
    """The evaluation of a domain's SPF policy."""

    domain: str
    record: str | None
    records_found: int
    lookups: int
    void_lookups: int
    policy: str | None  # the effective all: "-all", "~all", "?all", "+all"
    errors: list[str]
    warnings: list[str]
    tree: SpfNode | None


def spf_records(texts: list[str]) -> list[str]:
    """The TXT values that are SPF records (``v=spf1`` then a space or nothing)."""
    return [t for t in texts if re.match(r"^v=spf1(\s|$)", t.strip(), re.I)]


def parse_terms(record: str) -> tuple[list[tuple[str, str, str | None]], list[str]]:
    """``(qualifier, name, argument)`` per term (modifiers have qualifier "="), and errors."""
    terms: list[tuple[str, str, str | None]] = []
    errors: list[str] = []
    for term in record.split()[1:]:
        if re.search(r".[+\-~?]all$", term, re.I) and not re.fullmatch(r"[+\-~?]?all", term, re.I):
            errors.append(f"malformed term {term!r} ('all' must be its own term, after a space)")
            continue
        modifier = _MODIFIER.match(term)
        if modifier and modifier[1].lower() not in MECHANISMS:
            terms.append(("=", modifier[1].lower(), modifier[2]))
            continue
        match = _TERM.match(term)
        name = match[2].lower() if match else ""
        if not match or name not in MECHANISMS:
            errors.append(f"unknown or malformed term {term!r}")
            continue
        argument = match[3]
        if name in ("ip4", "ip6"):
            error = _check_network(name, argument, match[4])
            if error:
                errors.append(error)
                continue
            argument = argument + (match[4] or "") if argument else argument
        elif name in ("include", "exists") and not argument:
            errors.append(f"{name} needs a domain: {term!r}")
            continue
        elif name == "all" and (argument or match[4]):
            errors.append(f"'all' takes no argument: {term!r}")
            continue
        terms.append((match[1] or "+", name, argument))
    return terms, errors


def _check_network(name: str, address: str | None, cidr: str | None) -> str | None:
    if not address:
        return f"{name} needs an address"
    try:
        network = ipaddress.ip_network(address + (cidr or ""), strict=False)
    except ValueError:
        return f"{name}:{address}{cidr or ''} is not a valid network"
    if (name == "ip4") != (network.version == 4):
        return f"{name}:{address} is not an IPv{4 if name == 'ip4' else 6} address"
    return None


class _Walk:
    """Shared state of one evaluation: the lookup function and the hard cap."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.spent = 0

    async def txt(self, name: str) -> DnsAnswer:
        self.spent += 1
        return await self.lookup(name, "TXT")

    async def node(self, domain: str, chain: tuple[str, ...]) -> SpfNode:
        node = SpfNode(domain=domain)
        answer = await self.txt(domain)
        if answer.status not in (NOERROR, NODATA, NXDOMAIN):
            node.errors.append(f"SPF lookup of {domain} failed: {answer.status}")
            return node
        records = spf_records([r.value for r in answer.records])
        if not records:
            node.errors.append(f"{domain} has no SPF record")
            node.void_lookups += 1 if answer.status in (NODATA, NXDOMAIN) else 0
            return node
        if len(records) > 1:
            node.errors.append(
                f"{domain} has {len(records)} SPF records; there must be exactly one"
            )
        node.record = records[0]
        await self.evaluate(node, (*chain, domain))
        return node

    async def evaluate(self, node: SpfNode, chain: tuple[str, ...]) -> None:
        assert node.record is not None
        terms, errors = parse_terms(node.record)
        node.errors += errors
        targets: list[str] = []
        probes: list[Awaitable[bool]] = []
        for qualifier, name, argument in terms:
            if qualifier == "=":
                if name == "redirect" and argument:
                    node.redirect = argument.lower().rstrip(".")
                continue
            if name == "all":
                node.all = f"{qualifier}all"
                if node.all == "+all":
                    node.warnings.append(f"{node.domain}: '+all' lets anyone send as this domain")
            if name in COUNTED:
                node.lookups += 1
            if name == "ptr":
                node.warnings.append(
                    f"{node.domain}: 'ptr' is slow and discouraged (RFC 7208 §5.5)"
                )
            target = (argument or node.domain).lower().rstrip(".")
            if "%{" in target:
                node.warnings.append(f"{node.domain}: macro in {name}:{target} is not followed")
                continue
            if name == "include":
                targets.append(target)
            elif name in ("a", "mx", "exists"):
                probes.append(self.probe(name, target.split("/")[0]))
        if node.redirect:
            node.lookups += 1
            if node.all:
                node.warnings.append(
                    f"{node.domain}: 'redirect' is ignored because 'all' is present"
                )
            else:
                targets.append(node.redirect)
        # a term's own lookups and the included records are independent: ask them together
        voids, children = await asyncio.gather(
            asyncio.gather(*probes), asyncio.gather(*(self.child(t, chain, node) for t in targets))
        )
        node.void_lookups += sum(voids)
        node.children = children
        if node.redirect and not node.all:
            redirected = next((c for c in node.children if c.domain == node.redirect), None)
            node.all = redirected.all if redirected is not None else None

    async def child(self, target: str, chain: tuple[str, ...], parent: SpfNode) -> SpfNode:
        if target in chain:
            loop = SpfNode(domain=target)
            loop.errors.append(f"include loop: {' -> '.join((*chain, target))}")
            return loop
        if self.spent >= HARD_LOOKUP_CAP:
            stopped = SpfNode(domain=target)
            stopped.errors.append(f"not evaluated: over {HARD_LOOKUP_CAP} lookups")
            return stopped
        return await self.node(target, chain)

    async def probe(self, name: str, target: str) -> bool:
        """Run the term's own queries; True when it found nothing (a void lookup)."""
        self.spent += 1
        if name == "mx":
            answer = await self.lookup(target, "MX")
            hosts = [r.value.split()[-1].rstrip(".") for r in answer.records if r.type == "MX"]
            if hosts[:MX_HOST_LIMIT]:
                await asyncio.gather(*(self.lookup(h, "A") for h in hosts[:MX_HOST_LIMIT]))
            return not hosts
        answers = await asyncio.gather(self.lookup(target, "A"), self.lookup(target, "AAAA"))
        return not any(a.records for a in answers)


async def evaluate_spf(domain: str, lookup: Lookup) -> SpfReport:
    """Evaluate the SPF policy of ``domain``; ``lookup(name, type)`` asks DNS."""
    walk = _Walk(lookup)
    answer = await walk.txt(domain)
    records = spf_records([r.value for r in answer.records])
    if not records:
        return SpfReport(domain, None, 0, 0, 0, None, [], [], None)
    root = SpfNode(domain=domain, record=records[0])
    if len(records) > 1:
        root.errors.append(f"{len(records)} SPF records found; there must be exactly one")
    await walk.evaluate(root, (domain,))
    lookups, void = root.total_lookups(), root.total_void()
    errors = root.all_errors()
    if lookups > LOOKUP_LIMIT:
        errors.append(f"{lookups} DNS lookups; the limit is {LOOKUP_LIMIT}")
    if void > VOID_LIMIT:
        errors.append(f"{void} void lookups; the limit is {VOID_LIMIT}")
    warnings = root.all_warnings()
    if len(records[0]) > 512:
        warnings.append(f"the record is {len(records[0])} bytes; keep it under 512")
    policy = root.all or ("?all" if not root.redirect else None)
    return SpfReport(
        domain, records[0], len(records), lookups, void, policy, errors, warnings, root
    )
