"""Binary content a tool returns as it has it: ``Image`` and ``Audio`` (bytes and a MIME type).

A tool returning ``Image(png, "image/png")`` (or a list mixing them with strings and content
blocks) answers an image content block: base64 data and ``mimeType``, as the revision's
``ImageContent`` has them; ``Audio`` likewise, where the revision has audio content (2025-03-26
on). ``Image.from_file(path)`` reads a file and takes its MIME type from its name.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self, get_args


@dataclass(frozen=True, slots=True)
class Media:
    """Bytes of one kind of content block (``kind``: its ``type``), with their MIME type."""

    kind: ClassVar[str] = ""
    data: bytes  # (a bytearray or memoryview is copied into bytes)
    mime_type: str

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes | bytearray | memoryview):
            raise TypeError(f"{type(self).__name__} data must be bytes, not {type(self.data).__name__}")
        # a copy of a buffer (a bytearray changed later, a strided memoryview), bytes as they are
        object.__setattr__(self, "data", bytes(self.data))
        kind, slash, rest = self.mime_type.partition("/") if isinstance(self.mime_type, str) else ("", "", "")
        if not slash or kind != self.kind or not rest:
            raise ValueError(f"{type(self).__name__} needs an {self.kind}/* MIME type, not {self.mime_type!r}")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> Self:
        """The file's bytes, its MIME type ``mime_type`` or, by default, the one its name tells."""
        data = Path(path).read_bytes()
        guessed = mime_type or mimetypes.guess_type(os.fspath(path))[0]
        if guessed is None:
            raise ValueError(f"{os.fspath(path)}: its name tells no MIME type: give mime_type=")
        return cls(data, guessed)

    def block(self) -> dict[str, Any]:
        """The content block: ``{"type": kind, "data": base64, "mimeType": ...}``."""
        return {"type": self.kind, "data": base64.b64encode(self.data).decode("ascii"), "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class Image(Media):
    """An image a tool returns: ``Image(png_bytes, "image/png")`` or ``Image.from_file("plot.png")``."""

    kind: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True)
class Audio(Media):
    """Audio a tool returns: ``Audio(wav_bytes, "audio/wav")`` or ``Audio.from_file("note.wav")``."""

    kind: ClassVar[str] = "audio"


def block_kinds(content: tuple[type[Any], ...]) -> frozenset[str]:
    """The ``type`` values of a revision's content block classes (``text``, ``image``, ...)."""
    kinds: set[str] = set()
    for cls in content:
        field = getattr(cls, "model_fields", {}).get("type")
        if field is not None:
            kinds.update(value for value in get_args(field.annotation) if isinstance(value, str))
    return frozenset(kinds)
