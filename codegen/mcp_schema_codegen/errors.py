"""The generator's one exception type.

Every failure a user can cause (a bad schema, a missing file, a hash mismatch) is a
``GeneratorError``. It names the revision, the definition and the JSON pointer where it
knows them, so the CLI can print it as one line.
"""

from __future__ import annotations

from pathlib import Path


class GeneratorError(Exception):
    """A user-facing generator failure, printed by the CLI as one line."""

    def __init__(
        self,
        message: str,
        *,
        version: str | None = None,
        definition: str | None = None,
        pointer: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.version = version
        self.definition = definition
        self.pointer = pointer
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = []
        if self.version:
            where.append(f"schema {self.version}")
        if self.definition:
            where.append(f"definition {self.definition!r}")
        if self.pointer:
            where.append(f"at {self.pointer}")
        text = f"{', '.join(where)}: {self.message}" if where else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text.replace("\n", " ")


def read_user_text(path: Path) -> str:
    """A text file of the user's (``pyproject.toml``, a module the generator keeps): a
    ``GeneratorError`` naming it when it is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GeneratorError(f"{path} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
