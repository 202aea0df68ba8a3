"""Rules over what ``probes.py`` fetched beyond the page: links, hreflang return links, images.

Each check reads its probes from ``Site.extras`` and is left out when they are
absent (``analyze`` of a site nobody probed) or there was nothing to probe.
"""

from __future__ import annotations

from typing import Any

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.probes import (
    ALTERNATES,
    IMAGES,
    LINKS,
    AlternateProbe,
    Answer,
    ImageProbes,
    LinkProbes,
    declared_size,
)
from toolrun.tools.web.site import Site

HEAVY_IMAGE_BYTES = 500 * 1024  # SEOnaut's and Lighthouse-based tools' "heavy image"
ASPECT_TOLERANCE = 0.05


def _not_checked(answers: list[Answer]) -> list[dict[str, str]]:
    return [{"url": a.url, "reason": a.not_checked} for a in answers if a.not_checked]


def _is_broken(answer: Answer) -> bool:
    if answer.not_checked:
        return False
    return answer.error is not None or (answer.status_code or 0) >= 400


def check_broken_links(site: Site) -> Check | None:
    probes = site.extras.get(LINKS)
    if not isinstance(probes, LinkProbes) or not probes.targets:
        return None
    answers = probes.answers
    broken = [
        {"url": a.url, "statusCode": a.status_code, "error": a.error}
        for a in answers
        if _is_broken(a)
    ]
    redirecting = [
        {"url": a.url, "statusCode": a.redirect_status, "location": a.location}
        for a in answers
        if a.redirect_status is not None and not _is_broken(a)
    ]
    skipped = _not_checked(answers)
    probed = len(answers) - len(skipped)
    value = {
        "targets": probes.targets,
        "probed": probed,
        "broken": broken,
        "redirecting": redirecting,
        "notChecked": skipped,
    }
    counted = f"{probed} of {plural(probes.targets, 'distinct link target')} probed"
    if skipped:
        counted += f" ({len(skipped)} not checked)"
    if broken:
        first = broken[0]
        why = first["error"] or f"answered {first['statusCode']}"
        return make(
            "broken-links",
            "Page links to broken URLs",
            "fail",
            value,
            f"{counted}: {plural(len(broken), 'link')} broken (e.g. {first['url']}: {why}).",
            "Fix or remove links to missing pages; point redirecting links at their final URL.",
        )
    if redirecting:
        return make(
            "broken-links",
            "Page links to redirecting URLs",
            "warn",
            value,
            f"{counted}: {plural(len(redirecting), 'link')} redirect "
            f"(e.g. {redirecting[0]['url']} → {redirecting[0]['location']}).",
            "Link straight to the final URL to save crawlers and visitors a redirect.",
        )
    if not probed:
        return make(
            "broken-links",
            "Links could not be checked",
            "info",
            value,
            f"{counted}.",
        )
    return make("broken-links", "Links answer without errors", "pass", value, f"{counted}.")


def _same(a: str, b: str) -> bool:
    return a.split("#", 1)[0].rstrip("/") == b.split("#", 1)[0].rstrip("/")


def _return_problem(probe: AlternateProbe, page_urls: tuple[str, ...]) -> str | None:
    answer = probe.answer
    if answer.error:
        return answer.error
    if answer.status_code is not None and not 200 <= answer.status_code < 300:
        return f"answered {answer.status_code}"
    if probe.alternates is None:
        return "not an HTML page"
    if not any(_same(url, own) for url in probe.alternates for own in page_urls):
        return "no hreflang link back to this page"
    return None


def check_hreflang_return_links(site: Site) -> Check | None:
    found = site.extras.get(ALTERNATES)
    probes = [p for p in found if isinstance(p, AlternateProbe)] if isinstance(found, list) else []
    if not probes:
        return None
    page_urls = (site.page.final_url, site.page.url)
    missing: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for probe in probes:
        answer = probe.answer
        if answer.not_checked:
            skipped.append({"url": answer.url, "reason": answer.not_checked})
        elif (problem := _return_problem(probe, page_urls)) is not None:
            missing.append({"url": answer.url, "hreflang": probe.hreflang, "problem": problem})
    probed = len(probes) - len(skipped)
    value = {"probed": probed, "missing": missing, "notChecked": skipped}
    counted = f"{probed} of {plural(len(probes), 'alternate')} fetched"
    if missing:
        return make(
            "hreflang-return-links",
            "hreflang alternates do not link back",
            "warn",
            value,
            f"{counted}: {plural(len(missing), 'alternate')} without a return link "
            f"(e.g. {missing[0]['url']}: {missing[0]['problem']}).",
            "Give every language version the same complete set of hreflang links, "
            "including one to this page; search engines ignore one-way annotations.",
        )
    if not probed:
        return make(
            "hreflang-return-links", "hreflang return links not checked", "info", value, counted
        )
    return make(
        "hreflang-return-links",
        "hreflang alternates link back",
        "pass",
        value,
        f"{counted}: each links back to this page.",
    )


def check_image_weight(site: Site) -> Check | None:
    probes = site.extras.get(IMAGES)
    if not isinstance(probes, ImageProbes) or not probes.probes:
        return None
    heavy: list[dict[str, Any]] = []
    unmeasured: list[dict[str, Any]] = []
    for probe in probes.probes:
        answer = probe.answer
        if answer.not_checked or answer.error:
            unmeasured.append({"url": answer.url, "reason": answer.not_checked or answer.error})
        elif answer.status_code is not None and not 200 <= answer.status_code < 300:
            unmeasured.append({"url": answer.url, "reason": f"answered {answer.status_code}"})
        elif answer.content_length is None:
            unmeasured.append({"url": answer.url, "reason": "size not given (no Content-Length)"})
        elif answer.content_length > HEAVY_IMAGE_BYTES:
            heavy.append({"url": answer.url, "bytes": answer.content_length})
    measured = len(probes.probes) - len(unmeasured)
    value = {
        "images": probes.sources,
        "measured": measured,
        "heavy": heavy,
        "unmeasured": unmeasured,
    }
    counted = f"{measured} of {plural(probes.sources, 'distinct image')} measured"
    if heavy:
        return make(
            "image-weight",
            "Page has heavy images",
            "warn",
            value,
            f"{counted}: {plural(len(heavy), 'image')} over 500 KiB "
            f"(e.g. {heavy[0]['url']}: {heavy[0]['bytes']} bytes).",
            "Compress heavy images, serve WebP/AVIF and size them to how they are displayed.",
        )
    if not measured:
        return make("image-weight", "Image weight not measured", "info", value, f"{counted}.")
    return make("image-weight", "Images are light", "pass", value, f"{counted}: none over 500 KiB.")


def check_image_aspect_ratio(site: Site) -> Check | None:
    probes = site.extras.get(IMAGES)
    if not isinstance(probes, ImageProbes):
        return None
    intrinsic = {
        p.answer.url: (p.width, p.height)
        for p in probes.probes
        if p.width is not None
        and p.height is not None
        and p.width > 0
        and p.height > 0
        # Vector images scale to any box (Lighthouse skips them too).
        and p.type != "image/svg+xml"
    }
    if not intrinsic:
        return None
    compared = 0
    wrong: list[dict[str, Any]] = []
    page = site.page
    for attrs in page.images:
        declared = declared_size(attrs)
        url = (page.resolve(attrs.get("src")) or "").split("#", 1)[0]
        if declared is None or url not in intrinsic or "object-fit" in (attrs.get("style") or ""):
            continue
        compared += 1
        width, height = intrinsic[url]
        if abs((declared[0] / declared[1]) / (width / height) - 1) > ASPECT_TOLERANCE:
            wrong.append(
                {
                    "url": url,
                    "declared": f"{declared[0]:g}x{declared[1]:g}",
                    "intrinsic": f"{width}x{height}",
                }
            )
    if not compared:
        return None
    value = {"compared": compared, "mismatched": wrong}
    if wrong:
        first = wrong[0]
        return make(
            "image-aspect-ratio",
            "Images displayed with incorrect aspect ratio",
            "warn",
            value,
            f"{plural(len(wrong), 'image')} of {compared} declare a width and height whose ratio "
            f"differs from the file's by more than 5% (e.g. {first['url']}: "
            f"{first['declared']} declared, {first['intrinsic']} intrinsic).",
            "Make width and height match the image's own proportions (or crop the file).",
        )
    return make(
        "image-aspect-ratio",
        "Images displayed with correct aspect ratio",
        "pass",
        value,
        f"{plural(compared, 'image')} with declared sizes match the files' proportions.",
    )


PROBED_CHECKS = (
    check_broken_links,
    check_hreflang_return_links,
    check_image_weight,
    check_image_aspect_ratio,
)
