"""Alembic's script directory for the native store's schema (see ..migrate)."""
