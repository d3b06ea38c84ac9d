"""Character classes of "these ASCII characters, or any character beyond ASCII", for the
identifier and significant-character patterns of the statement splitter and the migration
engine.

Written the plain way, `[A-Za-z0-9_$\\x80-\\U0010ffff]`, such a class takes Python's regular
expression compiler 3 to 9 ms (it builds a table over the whole range), and the splitter alone
has four: more than everything else a migration Job or `ptah migrations up` loads before it
connects. `or_non_ascii` writes the same set as the complement of the ASCII characters left
out, `[^...]`, which compiles in microseconds and matches as fast; a unit test holds the two
forms equal on every code point.
"""

from __future__ import annotations

import re


def or_non_ascii(ascii_class: str) -> str:
    """A class matching what the class body `ascii_class` (ASCII only, as between `[` `]`)
    matches, and every character from U+0080 on."""
    inside = re.compile(f"[{ascii_class}]")
    left_out = [c for c in range(0x80) if not inside.fullmatch(chr(c))]
    ranges: list[str] = []
    start = previous = None
    for code in [*left_out, None]:
        if code is not None and previous is not None and code == previous + 1:
            previous = code
            continue
        if start is not None and previous is not None:
            first, last = f"\\x{start:02x}", f"\\x{previous:02x}"
            ranges.append(first if start == previous else f"{first}-{last}")
        start = previous = code
    return f"[^{''.join(ranges)}]" if ranges else r"[\s\S]"
