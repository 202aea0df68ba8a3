"""Keywords (most frequent terms and two-word phrases) and keyword stuffing.

Density = occurrences / words of server-rendered text (the first 20,000 words). A single term above
2.5% on a page of at least 300 words warns (geo-optimizer's stuffing
threshold); the top terms are always reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import compress, pairwise
from operator import and_, methodcaller, not_
from typing import Any

from toolrun.tools.web.checks import make
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

STUFFING_DENSITY = 0.025
MIN_WORDS = 300
TOP = 10
TERM_WINDOW = 20_000  # density is measured on the first 20,000 words (a sample, for speed)
PHRASE_WINDOW = 5_000  # two-word phrases are counted over the first 5,000 words
_PUNCTUATION = ".,;:!?()[]{}\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u2026-\u2013\u2014/|*#"
_STRIP_PUNCTUATION = methodcaller("strip", _PUNCTUATION)
_LONGER_THAN_TWO = (2).__lt__
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "more",
        "most",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "out",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "about",
        "after",
        "all",
        "also",
        "any",
        "been",
        "before",
        "being",
        "both",
        "each",
        "few",
        "other",
        "over",
        "own",
        "same",
        "some",
        "such",
        "only",
        "very",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "here",
        "le",
        "la",
        "les",
        "de",
        "des",
        "du",
        "un",
        "une",
        "et",
        "en",
        "est",
        "der",
        "die",
        "das",
        "und",
        "ist",
        "ein",
        "eine",
        "el",
        "los",
        "las",
        "y",
        "es",
    ]
)


_IS_STOP = STOPWORDS.__contains__


def usable_terms(tokens: Iterable[str]) -> dict[str, str | None]:
    """Each distinct token's term (lower-cased, punctuation stripped), or None where no term
    or phrase may hold it (two characters or fewer, or a stopword); cleaned once each."""
    distinct = list(dict.fromkeys(tokens))
    terms = list(map(_STRIP_PUNCTUATION, map(str.lower, distinct)))
    # (in C: maps over the distinct tokens rather than a Python loop)
    usable = map(and_, map(_LONGER_THAN_TWO, map(len, terms)), map(not_, map(_IS_STOP, terms)))
    found: dict[str, str | None] = dict.fromkeys(distinct)
    found.update(compress(zip(distinct, terms, strict=True), usable))
    return found


def _terms(counts: dict[str, int], usable: dict[str, str | None]) -> Counter[str]:
    """Counts of terms from counts of raw tokens."""
    terms: Counter[str] = Counter()
    for token, count in counts.items():
        term = usable[token]
        if term is not None and not term.isdigit():
            terms[term] += count
    return terms


def _phrases(words: list[str], usable: dict[str, str | None] | None = None) -> Counter[str]:
    """Two-word phrases of usable terms in ``words``. Pairs are counted as tuples and joined
    only once each: words hold no whitespace, so distinct pairs make distinct phrases, in
    the same first-seen order."""
    usable = usable if usable is not None else usable_terms(words)
    marks = list(map(usable.__getitem__, words))
    pairs = Counter(pairwise(marks))
    return Counter(
        {f"{a} {b}": count for (a, b), count in pairs.items() if a is not None and b is not None}
    )


def check_keywords(site: Site) -> Check | None:
    word_count = site.page.word_count
    if not word_count:
        return None
    counts, words = site.page.word_counts(TERM_WINDOW, PHRASE_WINDOW)
    usable = usable_terms(counts)
    terms = _terms(counts, usable)
    total = min(word_count, TERM_WINDOW)
    top: list[dict[str, Any]] = [
        {"term": term, "count": count, "densityPercent": round(100 * count / total, 2)}
        for term, count in terms.most_common(TOP)
    ]
    phrases = [
        {"phrase": p, "count": c} for p, c in _phrases(words, usable).most_common(TOP) if c > 1
    ]
    value = {"words": word_count, "sampledWords": total, "terms": top, "phrases": phrases}
    stuffed = [t for t in top if total >= MIN_WORDS and t["count"] / total > STUFFING_DENSITY]
    if stuffed:
        listed = ", ".join(f"{t['term']!r} {t['densityPercent']}%" for t in stuffed[:3])
        return make(
            "keywords",
            "Possible keyword stuffing",
            "warn",
            value,
            f"{listed} of all words (above {STUFFING_DENSITY:.1%}).",
            "Write naturally; vary wording instead of repeating the keyword.",
        )
    lead = ", ".join(t["term"] for t in top[:5])
    return make("keywords", "Main terms", "info", value, f"Most frequent terms: {lead}.")
