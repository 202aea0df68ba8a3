"""Domain tools: DNS, WHOIS and RDAP lookups, vendor lookup, Domain Connect links, setup checks.

One module per tool, each defining its input and output models and one ``DEFINITION``.
"""
