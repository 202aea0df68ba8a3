"""Open Graph and Twitter/X card tags.

ogp.me names four required properties: og:title, og:type, og:image, og:url;
og:description and og:site_name are recommended. Preview images should be at
least 200x200 (Facebook's minimum) and ideally 1200x630.
"""

from __future__ import annotations

from typing import Any

from toolrun.tools.web.checks import make
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

OG_REQUIRED = ("og:title", "og:type", "og:image", "og:url")
OG_RECOMMENDED = ("og:description", "og:site_name")
TWITTER_CARDS = frozenset({"summary", "summary_large_image", "app", "player"})
MIN_IMAGE_SIDE = 200


def check_open_graph(site: Site) -> Check:
    page = site.page
    present = {key: page.meta(key) for key in OG_REQUIRED + OG_RECOMMENDED}
    missing = [key for key in OG_REQUIRED if not present[key]]
    missing_recommended = [key for key in OG_RECOMMENDED if not present[key]]
    if len(missing) == len(OG_REQUIRED):
        return make(
            "open-graph",
            "No Open Graph tags",
            "fail",
            present,
            "Shared links will show whatever the platform guesses.",
            "Add og:title, og:type, og:image and og:url (plus og:description).",
        )
    if missing or missing_recommended:
        return make(
            "open-graph",
            "Open Graph tags are incomplete",
            "warn",
            present,
            "Missing: " + ", ".join(missing + missing_recommended) + ".",
            "Add the missing Open Graph properties.",
        )
    return make(
        "open-graph",
        "Open Graph tags are complete",
        "pass",
        present,
        "og:title, og:type, og:image, og:url, og:description and og:site_name are set.",
    )


def check_og_image(site: Site) -> Check | None:
    page = site.page
    raw = page.meta("og:image:secure_url", "og:image", "og:image:url")
    if raw is None:
        return None
    probe: dict[str, Any] = dict(site.extras.get("og_image_probe") or {})  # type: ignore[call-overload]
    value: dict[str, Any] = {
        "url": page.resolve(raw),
        "declaredWidth": page.meta("og:image:width"),
        "declaredHeight": page.meta("og:image:height"),
        "alt": page.meta("og:image:alt"),
        **probe,
    }
    if not raw.startswith(("http://", "https://")):
        return make(
            "og-image",
            "og:image is not an absolute URL",
            "warn",
            value,
            f"{raw!r} is relative; many platforms do not resolve it.",
            f"Use the absolute URL {value['url']}.",
        )
    if probe and not probe.get("reachable"):
        return make(
            "og-image",
            "og:image cannot be loaded",
            "fail",
            value,
            f"Fetching the image failed: {probe.get('error') or 'not an image'}.",
            "Point og:image at a publicly reachable PNG, JPEG, GIF or WebP image.",
        )
    width, height = probe.get("width"), probe.get("height")
    if isinstance(width, int) and isinstance(height, int) and min(width, height) < MIN_IMAGE_SIDE:
        return make(
            "og-image",
            "og:image is small",
            "warn",
            value,
            f"{width}x{height} is below {MIN_IMAGE_SIDE}x{MIN_IMAGE_SIDE}; platforms may "
            "show a small thumbnail or none.",
            "Use an image of at least 1200x630 pixels.",
        )
    if not (value["declaredWidth"] and value["declaredHeight"]):
        return make(
            "og-image",
            "og:image lacks declared dimensions",
            "warn",
            value,
            "Without og:image:width/height the first share may render without an image.",
            "Add og:image:width and og:image:height (and og:image:alt).",
        )
    return make("og-image", "og:image is usable", "pass", value, f"{value['url']}.")


def check_twitter_card(site: Site) -> Check:
    page = site.page
    card = page.meta("twitter:card")
    value: dict[str, Any] = {
        key: page.meta(f"twitter:{key}")
        for key in ("card", "site", "creator", "title", "description", "image")
    }
    fallback = {
        "title": bool(value["title"] or page.meta("og:title")),
        "description": bool(value["description"] or page.meta("og:description")),
        "image": bool(value["image"] or page.meta("twitter:image:src") or page.meta("og:image")),
    }
    value["fallsBackToOpenGraph"] = fallback
    if card is None:
        return make(
            "twitter-card",
            "No twitter:card",
            "warn",
            value,
            "X/Twitter needs twitter:card to render a card; title, description and image "
            "fall back to Open Graph.",
            '<meta name="twitter:card" content="summary_large_image">',
        )
    if card.lower() not in TWITTER_CARDS:
        return make(
            "twitter-card",
            "twitter:card has an unknown value",
            "warn",
            value,
            f"{card!r} is not summary, summary_large_image, app or player.",
            "Use summary or summary_large_image.",
        )
    if not all(fallback.values()):
        lacking = [k for k, ok in fallback.items() if not ok]
        return make(
            "twitter-card",
            "Twitter card is incomplete",
            "warn",
            value,
            "No value (nor Open Graph fallback) for: " + ", ".join(lacking) + ".",
            "Add twitter:title/description/image or their og: equivalents.",
        )
    return make("twitter-card", "Twitter card is set", "pass", value, f"twitter:card={card}.")


SOCIAL_CHECKS = (check_open_graph, check_og_image, check_twitter_card)
