"""Content a tool returns as it has it: ``Image``, ``Audio`` and ``File`` (bytes and a MIME type).

A tool returning ``Image(png, "image/png")`` (or a list mixing them with strings and content
blocks) answers an image content block: base64 data and ``mimeType``, as the revision's
``ImageContent`` has them; ``Audio`` likewise, where the revision has audio content (2025-03-26
on). ``File(pdf, "application/pdf")`` answers an embedded resource (every revision has them):
its ``uri`` and MIME type, and its bytes as ``text`` where the type is text and they decode in
its charset, else as a base64 ``blob``. ``from_file(path)`` reads a file and takes its MIME type from its name
(a ``File``'s URI too: ``file:///`` and the name, never the server's path).
"""

from __future__ import annotations

import base64
import codecs
import mimetypes
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self, get_args
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class Media:
    """Bytes of one kind of content block (``kind``: its ``type``), with their MIME type."""

    kind: ClassVar[str] = ""
    data: bytes  # (a bytearray or memoryview is copied into bytes)
    mime_type: str

    def __post_init__(self) -> None:
        self._take_bytes("bytes")
        kind, slash, rest = self.mime_type.partition("/") if isinstance(self.mime_type, str) else ("", "", "")
        if not slash or kind != self.kind or not rest:
            raise ValueError(f"{type(self).__name__} needs an {self.kind}/* MIME type, not {self.mime_type!r}")

    def _take_bytes(self, accepted: str) -> None:
        if not isinstance(self.data, bytes | bytearray | memoryview):
            raise TypeError(f"{type(self).__name__} data must be {accepted}, not {type(self.data).__name__}")
        # a copy of a buffer (a bytearray changed later, a strided memoryview), bytes as they are
        object.__setattr__(self, "data", bytes(self.data))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> Self:
        """The file's bytes, its MIME type ``mime_type`` or, by default, the one its name tells."""
        return cls(*read_named(path, mime_type))

    def block(self) -> dict[str, Any]:
        """The content block: ``{"type": kind, "data": base64, "mimeType": ...}``."""
        return {"type": self.kind, "data": base64.b64encode(self.data).decode("ascii"), "mimeType": self.mime_type}

    def contents(self, mime_type: str | None = None) -> dict[str, str]:
        """The bytes as resource contents of ``mime_type`` (default: its own) carry them: ``{"blob":
        base64}`` (a ``File`` of a text type: ``{"text": ...}``)."""
        return {"blob": base64.b64encode(self.data).decode("ascii")}


@dataclass(frozen=True, slots=True)
class Image(Media):
    """An image a tool returns: ``Image(png_bytes, "image/png")`` or ``Image.from_file("plot.png")``."""

    kind: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True)
class Audio(Media):
    """Audio a tool returns: ``Audio(wav_bytes, "audio/wav")`` or ``Audio.from_file("note.wav")``."""

    kind: ClassVar[str] = "audio"


# MIME types outside text/* whose content is text (RFC 6838's +json, +xml and +yaml suffixes too)
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/sql",
        "application/javascript",
        "application/ecmascript",
        "application/x-ndjson",
        "application/x-sh",
        "application/graphql",
    }
)
TEXT_SUFFIXES = ("+json", "+xml", "+yaml")
# names whose MIME type Python's ``mimetypes`` does not know on every supported version (3.11)
KNOWN_NAMES = {
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".md": "text/markdown",
}
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True, slots=True)
class File(Media):
    """A file a tool returns as an embedded resource: ``File(csv, "text/csv")``, ``File(pdf,
    "application/pdf", uri="reports://2026/q3")`` or ``File.from_file("report.pdf")``. Text (a
    ``text/*`` type, JSON, XML, YAML, ...) whose bytes decode in its ``charset`` (UTF-8 when it
    names none) goes as ``text``, anything else as a base64 ``blob``; a ``str`` is written in that
    charset. ``uri`` names it (default: ``file:///`` and a name its MIME type suggests: give each of
    several files its own)."""

    kind: ClassVar[str] = "resource"
    uri: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.data, str) and isinstance(self.mime_type, str):  # in the charset its type names
            try:
                object.__setattr__(self, "data", self.data.encode(charset_of(self.mime_type) or "utf-8"))
            except UnicodeEncodeError as exc:
                raise ValueError(f"File text has characters its charset cannot hold: {exc}") from None
        self._take_bytes("bytes or str")
        kind, slash, rest = self.mime_type.partition("/") if isinstance(self.mime_type, str) else ("", "", "")
        if not kind or not slash or not rest:
            raise ValueError(f"File needs a MIME type (type/subtype), not {self.mime_type!r}")
        if not isinstance(self.uri, str):
            raise TypeError(f"File uri must be a string, not {type(self.uri).__name__}")
        if self.uri and not _URI.match(self.uri):
            raise ValueError(f"File uri must be a URI (scheme:...), not {self.uri!r}")
        if not self.uri:
            extension = mimetypes.guess_extension(self.mime_type.partition(";")[0].strip()) or ""
            object.__setattr__(self, "uri", f"file:///file{extension}")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> Self:
        """The file's bytes, its MIME type (``mime_type`` or the one its name tells) and the URI
        ``file:///`` and its name (the directory it is in stays on the server)."""
        data, kind = read_named(path, mime_type)
        return cls(data, kind, f"file:///{quote(Path(path).name)}")

    def text(self, mime_type: str | None = None) -> str | None:
        """The bytes as text, where the MIME type (``mime_type``, default its own) is text and they
        decode in its ``charset`` (UTF-8 when it names none); else None."""
        written = mime_type or self.mime_type
        essence = written.partition(";")[0].strip().lower()
        if not (essence.startswith("text/") or essence in TEXT_TYPES or essence.endswith(TEXT_SUFFIXES)):
            return None
        charset = charset_of(written)
        if charset is None:  # named, but no charset Python knows
            return None
        try:
            return self.data.decode(charset)
        except UnicodeDecodeError:  # bytes not in it
            return None

    def contents(self, mime_type: str | None = None) -> dict[str, str]:
        text = self.text(mime_type)
        return {"text": text} if text is not None else {"blob": base64.b64encode(self.data).decode("ascii")}

    def block(self) -> dict[str, Any]:
        """The embedded resource: ``{"type": "resource", "resource": {uri, mimeType, text or blob}}``."""
        return {"type": "resource", "resource": {"uri": self.uri, "mimeType": self.mime_type, **self.contents()}}


def read_named(path: str | os.PathLike[str], mime_type: str | None) -> tuple[bytes, str]:
    """A file's bytes and its MIME type: ``mime_type``, else the one its name tells."""
    data = Path(path).read_bytes()
    name = Path(path).name
    guessed = mime_type or mimetypes.guess_type(name)[0] or KNOWN_NAMES.get(Path(name).suffix.lower())
    if guessed is None:
        raise ValueError(f"{os.fspath(path)}: its name tells no MIME type: give mime_type=")
    return data, guessed


def charset_of(mime_type: str) -> str | None:
    """The Python codec of a MIME type's ``charset`` parameter: ``utf-8`` when it names none, None
    when it names one Python does not know as a text encoding."""
    for parameter in mime_type.split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip('"'):
            try:
                info = codecs.lookup(value.strip().strip('"'))
            except LookupError:
                return None
            return info.name if getattr(info, "_is_text_encoding", True) else None
    return "utf-8"


def block_kinds(content: tuple[type[Any], ...]) -> frozenset[str]:
    """The ``type`` values of a revision's content block classes (``text``, ``image``, ...)."""
    kinds: set[str] = set()
    for cls in content:
        field = getattr(cls, "model_fields", {}).get("type")
        if field is not None:
            kinds.update(value for value in get_args(field.annotation) if isinstance(value, str))
    return frozenset(kinds)
