"""Pages of a list command: `--limit N` and a cursor to the next page, spelled the same everywhere.

Lists read back from the newest (`sessions`, `show`, `coverage`, `processes`, `hold list`) take
`--before SEQ`: the next page is `--before` the smallest seq of this one. Lists read forward in
seq order (`tail`, `export`) take `--from SEQ`: the next page is `--from` the last seq + 1. When
rows remain past a page, one line on stderr says so and names the next page's option (stdout
stays the list alone, whatever its format); a command whose `--json` is one object also carries
it there, as `"next": {"before": SEQ}` or `{"from": SEQ}` (null on the last page).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, TypeVar

T = TypeVar("T")


def page_back(items: Sequence[T], seq: Callable[[T], int], *, limit: Optional[int],
              before: Optional[int]) -> tuple[list[T], Optional[int]]:
    """The newest `limit` of `items` (in seq order) whose seq is below `before`, in seq order, and the
    cursor of the next page (the page's smallest seq), or None when no earlier item remains."""
    kept = sorted((i for i in items if before is None or seq(i) < before), key=seq)
    if limit is None or len(kept) <= limit:
        return kept, None
    page = kept[len(kept) - limit:] if limit else []
    return page, (seq(page[0]) if page else before if before is not None else seq(kept[-1]) + 1)


def more_remain(option: str, value: int) -> str:
    """The stderr line saying rows remain past this page and how to ask for the next."""
    return f"agentwatch: more remain; the next page: {option} {value}"
