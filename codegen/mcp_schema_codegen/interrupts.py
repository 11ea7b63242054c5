"""The signals the CLI received, for the points where a command commits what it staged.

The CLI's SIGINT/SIGTERM handler records each signal here, then raises. A raise can be lost:
one landing inside a finalizer the garbage collector runs is printed as "Exception ignored in
..." and dropped, and the command goes on. ``commit_point`` (before a staged tree is renamed
into place) finds the signal recorded and stops the command there, so an interrupted command
never leaves its result behind.
"""

from __future__ import annotations

SIGNALLED: list[int] = []


class Signalled(KeyboardInterrupt):
    """An interrupt found at a commit point: the one raised when it came was lost."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def commit_point() -> None:
    """Raise ``Signalled`` when a signal has been received (its own raise lost: a scaffold went on
    after "Exception ignored in ZipFile.__del__" and ended 0 with the project in place)."""
    if SIGNALLED:
        raise Signalled(SIGNALLED[-1])
