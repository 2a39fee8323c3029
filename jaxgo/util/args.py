"""argparse types the commands share, so a bad number is one line of usage, never a traceback."""

from __future__ import annotations

import argparse


def at_least(low: int):
    """argparse type: an integer >= ``low`` (ArgumentTypeError naming the bound otherwise)."""
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text}")
        return value
    return parse
