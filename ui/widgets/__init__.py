"""Widgets the window lays out: the table, the sidebar, the detail panel, the filter chips."""
