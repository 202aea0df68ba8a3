"""Data files bundled with toolrun: the IANA RDAP bootstrap snapshot, provider signatures, suffixes."""
