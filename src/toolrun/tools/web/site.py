"""Everything fetched for one job: the page and the site files fetched beside it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from toolrun.tools.web.llms_txt import LlmsTxt, parse_llms_txt
from toolrun.tools.web.page import Page
from toolrun.tools.web.robots import Robots, parse_robots
from toolrun.tools.web.sitemap import Sitemap, parse_sitemap
from toolrun.tools.web.structured_data import StructuredData, extract


@dataclass(frozen=True)
class SiteFile:
    """A site-level file (robots.txt, sitemap.xml, llms.txt): its answer or why there is none."""

    url: str
    status_code: int | None = None
    content_type: str | None = None
    text: str | None = None
    error: str | None = None
    truncated: bool = False  # only the first bytes up to the file's cap were read

    @property
    def found(self) -> bool:
        """A 2xx answer with a body."""
        return (
            self.status_code is not None
            and 200 <= self.status_code < 300
            and bool(self.text and self.text.strip())
        )


@dataclass
class Site:
    """The page plus its origin's robots.txt, sitemap.xml and llms.txt (each may be missing)."""

    page: Page
    robots_file: SiteFile | None = None
    sitemap_file: SiteFile | None = None
    llms_file: SiteFile | None = None
    files: dict[str, SiteFile] = field(default_factory=dict)  # every file fetched, by name
    extras: dict[str, object] = field(default_factory=dict)

    @cached_property
    def robots(self) -> Robots | None:
        """The parsed robots.txt; None when there is none (a 4xx or no answer)."""
        file = self.robots_file
        if file is None or not file.found or file.text is None:
            return None
        if (file.content_type or "").startswith("text/html"):
            return None
        return parse_robots(file.text)

    @cached_property
    def sitemap(self) -> Sitemap | None:
        file = self.sitemap_file
        if file is None or not file.found or file.text is None:
            return None
        return parse_sitemap(file.text)

    @cached_property
    def llms(self) -> LlmsTxt | None:
        file = self.llms_file
        if file is None or not file.found or file.text is None:
            return None
        return parse_llms_txt(file.text, file.content_type)

    @cached_property
    def json_ld(self) -> StructuredData:
        """The page's JSON-LD; ``microdata_types`` left empty (it costs a walk over the tree)."""
        return extract(self.page.json_ld_blocks)

    @cached_property
    def structured(self) -> StructuredData:
        """The page's JSON-LD and the microdata item types of its elements."""
        page = self.page
        # No element with an item type: no walk for them.
        if not page.has_attribute("itemtype"):
            return replace(self.json_ld, microdata_types=[])
        microdata = [node.attributes.get("itemtype") or "" for node in page.tree.css("[itemtype]")]
        return replace(self.json_ld, microdata_types=[m for m in microdata if m])
