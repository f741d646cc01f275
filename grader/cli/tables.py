"""A table where it fits without breaking a word, a stacked layout where it does not.

rich shrinks a table that is wider than the terminal by cutting its cells mid-word ("Cha/nge/s",
"kv_cache_decod/e"), which reads badly and cannot be copied. A table's minimum width (rich's own
measure: each column's longest word, names that never wrap whole) says whether it fits; where it
does not, the command prints the same rows stacked, one field after another, wrapped at spaces only.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table

UNCONSTRAINED = 10_000


def fits(console: Console, table: Table, width: int | None = None) -> bool:
    """Whether ``table`` fits ``width`` (default: the console's) without a word broken across lines."""
    width = width or console.width
    # Measured unconstrained: rich clamps a measurement to the width it is given, which hides the overflow.
    return Measurement.get(console, console.options.update_width(UNCONSTRAINED), table).minimum <= width


def table_or_stacked(console: Console, table: Table, stacked: RenderableType, *, width: int | None = None) -> None:
    """Print ``table`` where it fits, else ``stacked`` (the same rows, one field after another)."""
    if fits(console, table, width):
        console.print(table, width=width)
    else:
        console.print(stacked, width=width)
