from pathlib import Path


def detect(path: Path) -> list:
    return []
