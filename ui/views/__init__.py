"""The window's views, one module each: every module that declares ``VIEW`` (a View subclass)
is a tab and a View menu entry (view_registry.py finds them)."""
