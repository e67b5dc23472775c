"""Stores other agent tools write, each one module behind the source protocol.

``registry.py`` lists them and detects them (``detect_formats``); ``match.py`` is a detection's
answer; ``base.py`` and ``sql_backed.py`` are what the formats share.
"""
