"""``LoggingLevel``'s values ranked, least severe first: what a message's level is compared with
the level a client asked for (``Context.logs``).

The schema lists the levels but states no order; ``schema/overlay.json``'s ``log_levels`` does,
and each generated revision package hands its ranking to the runtime when it is imported
(``Revision.log_levels``), so a level a new revision adds needs no change here. A client ranks
the levels its registry's entries declare (``RevisionEntry.log_levels``) before it checks the
level it is asked for, as no revision is imported by then. Until then, and for packages generated
before, RFC 5424's order.
"""

from __future__ import annotations

from collections.abc import Sequence

RANKS: dict[str, int] = {
    "debug": 0,
    "info": 1,
    "notice": 2,
    "warning": 3,
    "error": 4,
    "critical": 5,
    "alert": 6,
    "emergency": 7,
}


def rank(order: Sequence[str]) -> None:
    """Take ``order`` (least severe first) as the ranking when it ranks every level ranked so far:
    a revision generated with a newer overlay adds levels; one generated with an older overlay
    (fewer levels) or a disagreeing one changes nothing."""
    if set(RANKS) <= set(order) and list(order) != sorted(RANKS, key=RANKS.__getitem__):
        ranked = {level: index for index, level in enumerate(order)}
        RANKS.clear()
        RANKS.update(ranked)


def nearest(level: str, levels: Sequence[str]) -> str:
    """The level of ``levels`` (a revision's) to ask for in place of ``level``: itself when the
    revision has it, else the most severe of its levels ranked at or below it (whatever ``level``
    lets through still reaches the client), else its least severe. A client asked for a level a
    newer revision adds ("trace") asks a server of an older one for "debug"."""
    if not levels or level in levels or level not in RANKS:
        return level
    ranked = [known for known in levels if known in RANKS]
    below = [known for known in ranked if RANKS[known] <= RANKS[level]]
    if below:
        return max(below, key=RANKS.__getitem__)
    return min(ranked, key=RANKS.__getitem__) if ranked else level
