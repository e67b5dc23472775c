"""Qt item models over the store session's reads."""
