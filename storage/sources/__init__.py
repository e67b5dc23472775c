"""One module per store kind, each behind the protocol in ``base``."""
