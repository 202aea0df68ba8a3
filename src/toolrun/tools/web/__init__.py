"""Website tools: meta checker, SEO checker, GEO checker and link preview.

Fetching (``fetching.py``) is kept apart from analysis: the analyzers take a
parsed ``Page`` and the site files fetched beside it and are pure functions.
"""
