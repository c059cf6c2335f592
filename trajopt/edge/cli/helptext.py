"""Command-line help from a module's docstring: its first paragraph as one plain sentence (no reST markup)."""

from __future__ import annotations

import re


def description(doc: str | None) -> str:
    """The first paragraph of ``doc`` joined into one line, without reST markup (````code````, :role:`x`)."""
    paragraph = (doc or "").strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in paragraph.splitlines())
    text = re.sub(r":[a-z]+:`([^`]*)`", r"\1", text)
    return text.replace("``", "").replace("`", "")
