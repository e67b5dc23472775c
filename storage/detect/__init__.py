"""What a path holds, looked at without opening it: ``looks.py`` (one look at the file system, and
a detection remembered while the files it consulted stay as they were), ``table_mapping.py`` (a
person's mapping of one SQLite table onto memories), ``store_urls.py`` (a store named by a path or
a server's URL) and ``discover.py`` (the stores under some folders, each opened read-only to count
it). Detecting itself, and opening, is ``opening.py``'s: looks, table mapping and store URLs sit
below it, discover above it.

The package imports none of its modules: importing ``detect.looks`` loads that module alone.
"""
