"""Turn a title into a URL slug."""

import re


def slugify(title: str) -> str:
    """Lower-case words joined by single dashes: "Hello, World!" -> "hello-world"."""
    words = re.split(r"[^A-Za-z0-9]", title)
    return "-".join(words)
