"""Images: alt text (axe's image-alt rule) and declared dimensions."""

from __future__ import annotations

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

MAX_ALT_CHARS = 100  # SEOnaut's "alt text too long"


def has_text_alternative(attrs: dict[str, str | None]) -> bool:
    """axe image-alt: alt (even empty), aria-label, aria-labelledby, a title, or a none role."""
    if attrs.get("alt") is not None or "alt" in attrs:
        return True
    if (attrs.get("aria-label") or "").strip() or (attrs.get("aria-labelledby") or "").strip():
        return True
    if (attrs.get("title") or "").strip():
        return True
    return (attrs.get("role") or "").strip().lower() in {"none", "presentation"}


def check_image_alt(site: Site) -> Check | None:
    tree = site.page.tree
    total = len(tree.css("img"))
    if not total:
        return None
    missing = []
    for node in tree.css("img:not([alt])"):  # the rest have alt, even empty: they pass
        attrs = node.attributes
        if not has_text_alternative(attrs):
            missing.append(site.page.resolve(attrs.get("src")) or attrs.get("src") or "(no src)")
    long_alt = [
        node.attrs.get("src")
        for node in tree.css("img[alt]")
        if len(node.attrs.get("alt") or "") > MAX_ALT_CHARS
    ]
    coverage = round(100 * (total - len(missing)) / total, 1)
    value = {"images": total, "withoutAlt": missing[:50], "coveragePercent": coverage}
    if missing:
        return make(
            "image-alt",
            "Image elements lack [alt] attributes",
            "fail",
            value,
            f"{plural(len(missing), 'image')} of {total} have no text alternative "
            f"({coverage}% covered).",
            'Describe each informative image in alt; use alt="" for decorative ones.',
        )
    if long_alt:
        value["longAlt"] = long_alt[:20]
        return make(
            "image-alt",
            "Some alt texts are very long",
            "warn",
            value,
            f"{plural(len(long_alt), 'alt text')} over {MAX_ALT_CHARS} characters.",
            "Keep alt text short; put long descriptions in the page text.",
        )
    return make(
        "image-alt",
        "Image elements have [alt] attributes",
        "pass",
        value,
        f"All {plural(total, 'image')} have a text alternative.",
    )


def check_image_dimensions(site: Site) -> Check | None:
    tree = site.page.tree
    images = len(tree.css("img[src]"))
    if not images:
        return None
    unsized = []
    seen: set[int] = set()
    selector = "img[src]:not([width]), img[src]:not([height]), img[width=''], img[height='']"
    for node in tree.css(selector):  # a selector list may match a node twice
        attrs = node.attributes
        if node.mem_id in seen or "width" in (attrs.get("style") or ""):
            continue
        seen.add(node.mem_id)
        unsized.append(attrs.get("src"))
    if unsized:
        return make(
            "image-dimensions",
            "Images without width and height",
            "warn",
            {"images": images, "unsized": unsized[:50]},
            f"{plural(len(unsized), 'image')} of {images} have no width/height "
            "attributes, so the layout shifts while they load.",
            "Give every <img> width and height attributes (or a CSS aspect-ratio).",
        )
    return make(
        "image-dimensions",
        "Images have explicit dimensions",
        "pass",
        {"images": images, "unsized": []},
        "Every image declares its size.",
    )


IMAGE_CHECKS = (check_image_alt, check_image_dimensions)
