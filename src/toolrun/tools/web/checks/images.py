"""Images: alt text (axe's image-alt rule) and declared dimensions."""

from __future__ import annotations

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site
from toolrun.tools.web.treewalk import ImageColumns

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
    page = site.page
    alts = page.image_columns.alt
    total = len(alts)
    if not total:
        return None
    # Each list is built only if some image can be on it (cheap whole-list tests first); an
    # image without alt is judged on all its attributes.
    missing = (
        [
            page.resolve(attrs.get("src")) or attrs.get("src") or "(no src)"
            for attrs in page.images
            if "alt" not in attrs and not has_text_alternative(attrs)
        ]
        if False in alts
        else []
    )
    longest = max(map(len, filter(None, alts)), default=0)  # type: ignore[arg-type]
    long_alt = (
        [
            src
            for src, alt in zip(page.image_srcs, alts, strict=True)
            if isinstance(alt, str) and len(alt) > MAX_ALT_CHARS
        ]
        if longest > MAX_ALT_CHARS
        else []
    )
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


def is_unsized(attrs: dict[str, str | None]) -> bool:
    """CSS ``img[src]:not([width]), img[src]:not([height]), img[width=''], img[height='']``,
    less images whose style sets a width."""
    if "width" in (attrs.get("style") or ""):
        return False
    if "src" in attrs and ("width" not in attrs or "height" not in attrs):
        return True
    return ("width" in attrs and not attrs["width"]) or ("height" in attrs and not attrs["height"])


def _may_be_unsized(columns: ImageColumns) -> bool:
    """False when every image has a non-empty width and height and none a style: then
    ``is_unsized`` holds for none."""
    return any(
        absent in column
        for column in (columns.width, columns.height)
        for absent in (False, None, "")
    ) or columns.style.count(False) != len(columns.style)


def check_image_dimensions(site: Site) -> Check | None:
    sources = site.page.image_columns.src
    images = len(sources) - sources.count(False)
    if not images:
        return None
    unsized = (
        [attrs.get("src") for attrs in site.page.images if is_unsized(attrs)]
        if _may_be_unsized(site.page.image_columns)
        else []
    )
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
