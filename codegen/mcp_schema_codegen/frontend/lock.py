"""The schema lock: which revisions exist, their era, and the exact bytes expected.

``schema/lock.json`` lists every revision with its era, sha256, size and the exact source it
was adopted from (an upstream URL pinned to a commit, or a file). The locked schemas live
beside it as ``schema/<version>/schema.json``; the generator ships the five upstream ones, so
nothing needs fetching until a new revision is adopted. ``fetch`` reads one schema from a
source: a directory or base URL holding ``<version>/schema.json``, a URL with ``{version}``,
or one file.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp_schema_codegen.digest import sha256_hex
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.jsondata import load_json

Era = Literal["legacy", "modern"]
ERAS: tuple[Era, ...] = ("legacy", "modern")
LOCK_NAME = "lock.json"


@dataclass(frozen=True)
class LockedRevision:
    version: str
    era: Era
    sha256: str
    size: int
    url: str  # the exact file this revision's bytes were adopted from


@dataclass(frozen=True)
class Lock:
    path: Path
    url_template: str
    revisions: dict[str, LockedRevision]

    @property
    def schema_dir(self) -> Path:
        return self.path.parent

    def revision(self, version: str) -> LockedRevision:
        try:
            return self.revisions[version]
        except KeyError:
            known = ", ".join(self.revisions)
            if not is_version(version):
                # no schema sync adopts it either: no hint to
                message = f"revision {version!r} is not an MCP protocol version (YYYY-MM-DD; known: {known})"
                raise GeneratorError(message) from None
            raise GeneratorError(
                f"revision {version!r} is not in the lock {self.path} (known: {known})",
                hint=f"adopt it with `mcp-codegen schema sync --from DIR|URL|FILE --version {version} --update-lock`",
            ) from None

    def schema_path(self, version: str) -> Path:
        return self.schema_dir / version / "schema.json"

    def read_schema(self, version: str) -> tuple[bytes, LockedRevision]:
        """The verified bytes of one locked revision."""
        rev = self.revision(version)
        path = self.schema_path(version)
        data = read_file(path, hint="run `mcp-codegen schema sync` to fetch the locked schemas")
        digest = sha256_hex(data)
        if digest != rev.sha256:
            raise GeneratorError(
                f"{path} has sha256 {digest[:12]}…, the lock expects {rev.sha256[:12]}…",
                hint="re-run `mcp-codegen schema sync`, or adopt it with --update-lock",
            )
        return data, rev

    def mismatches(self, versions: list[str]) -> list[str]:
        """Which of ``versions`` have a schema file missing or different from the lock, one line each."""
        problems = []
        for version in versions:
            try:
                self.read_schema(version)
            except GeneratorError as exc:
                problems.append(exc.one_line())
        return problems


def read_file(path: Path, hint: str | None = None) -> bytes:
    """A file's bytes; every way it can be unreadable is one clear error."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise GeneratorError(f"{path} does not exist", hint=hint) from None
    except IsADirectoryError:
        raise GeneratorError(f"{path} is a directory, not a schema file") from None
    except OSError as exc:
        raise GeneratorError(f"cannot read {path}: {exc.strerror or exc}") from None


LOCK_ENTRY_KEYS = ("era", "sha256", "size", "url")  # of each revision in lock.json


def json_kind(value: object) -> str:
    """What a JSON value is, for a message: ``null``, ``a list``, ``a string``..."""
    if value is None:
        return "null"
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def load_lock(schema_dir: Path) -> Lock:
    path = schema_dir / LOCK_NAME
    if not path.is_file():
        raise GeneratorError(
            f"no schema lock at {path}",
            hint="run from a project with schema/lock.json, or pass --schema-dir",
        )
    raw = load_json(read_file(path), str(path))
    if not isinstance(raw, dict):
        raise GeneratorError(f"{path} is malformed: it holds {json_kind(raw)}, not an object")
    versions = raw.get("versions")
    if not isinstance(versions, dict):
        raise GeneratorError(f'{path} is malformed: "versions" is {json_kind(versions)}, not an object')
    upstream = raw.get("upstream")
    template = upstream.get("url_template") if isinstance(upstream, dict) else None
    if not isinstance(template, str):
        raise GeneratorError(f'{path} is malformed: "upstream" needs a "url_template" string')
    revisions = {}
    for version, entry in sorted(versions.items()):
        missing = [key for key in LOCK_ENTRY_KEYS if not isinstance(entry, dict) or key not in entry]
        if missing:
            raise GeneratorError(f"{path} is malformed: revision {version!r} lacks {', '.join(map(repr, missing))}")
        size = entry["size"]
        if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
            raise GeneratorError(f"{path}: revision {version} has size {size!r}, not a byte count")
        revisions[version] = LockedRevision(version, entry["era"], entry["sha256"], size, entry["url"])
    for rev in revisions.values():
        check_version(rev.version, where=str(path))
        if not (isinstance(rev.sha256, str) and re.fullmatch(r"[0-9a-f]{64}", rev.sha256)):
            raise GeneratorError(f"{path}: revision {rev.version} has sha256 {rev.sha256!r}, not 64 hex digits")
        if not isinstance(rev.url, str):
            raise GeneratorError(f"{path}: revision {rev.version} has url {rev.url!r}, not a string")
        if not isinstance(rev.era, str) or rev.era not in ERAS:
            raise GeneratorError(f"{path}: revision {rev.version} has unknown era {rev.era!r}")
    return Lock(path=path, url_template=template, revisions=revisions)


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits: a revision name becomes a module name


def is_version(version: object) -> bool:
    """A revision name is an MCP protocol version, a ``YYYY-MM-DD`` date (what the runtime takes,
    and orders revisions by), and becomes a package name (``vYYYY_MM_DD``)."""
    return isinstance(version, str) and _DATE.fullmatch(version) is not None and _is_date(version)


def check_version(version: str, where: str = "") -> None:
    """Refuse a revision name that is no MCP protocol version (``is_version``)."""
    if not is_version(version):
        prefix = f"{where}: " if where else ""
        raise GeneratorError(f"{prefix}revision {version!r} is not an MCP protocol version (YYYY-MM-DD)")


def _is_date(text: str) -> bool:
    try:
        return datetime.date.fromisoformat(text).year >= 1
    except ValueError:
        return False


def is_url(source: str) -> bool:
    return "://" in source


def source_location(source: str, version: str) -> str:
    """Where ``source`` keeps ``version``: a URL, or a local path (absolute)."""
    if is_url(source):
        if "{version}" in source:
            return source.replace("{version}", version)
        return source.rstrip("/") + f"/{version}/schema.json"
    path = Path(source)
    if path.is_file():
        return str(path.resolve())
    return str((path / version / "schema.json").resolve())


def fetch(location: str) -> tuple[bytes, str]:
    """The bytes at ``location`` (a URL or a local path) and the exact source to record for them."""
    if not is_url(location):
        path = Path(location)
        return read_file(path), path.resolve().as_uri()
    try:
        with urllib.request.urlopen(location, timeout=30) as response:
            data: bytes = response.read()
            return data, location
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason: object = getattr(exc, "reason", exc)
        if isinstance(exc, urllib.error.HTTPError):
            reason = f"HTTP {exc.code} {exc.reason}"
        raise GeneratorError(
            f"cannot download {location}: {reason}",
            hint="check the network, or sync from a local copy with --from DIR",
        ) from None


def atomic_write(target: Path, data: bytes, prefix: str = ".mcp-codegen-") -> None:
    """Replace ``target`` with ``data`` in one rename (a reader sees the old or the new bytes); the
    bytes are written first to ``<prefix>*.tmp`` beside it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f"{prefix}{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask's mode, as open() gives
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, target.stat().st_mode & 0o7777)  # a file rewritten keeps its mode
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock_text(lock: Lock, revisions: dict[str, LockedRevision]) -> bytes:
    """The lock file with ``revisions`` as its entries (other keys kept as they are)."""
    raw: dict[str, Any] = json.loads(read_file(lock.path))
    raw["versions"] = {
        v: {"era": r.era, "sha256": r.sha256, "size": r.size, "url": r.url} for v, r in sorted(revisions.items())
    }
    return (json.dumps(raw, indent=2) + "\n").encode()


def sync(lock: Lock, source: str | None, versions: list[str] | None = None) -> list[tuple[str, str]]:
    """Fetch, verify and install schemas; returns (version, status) pairs.

    Without ``source`` each revision comes from the exact source the lock records. All are
    fetched and verified before any is installed, so a mismatch leaves the directory as it was.
    """
    wanted = versions or list(lock.revisions)
    fetched: list[tuple[LockedRevision, bytes]] = []
    for version in wanted:
        rev = lock.revision(version)
        target = lock.schema_path(version)
        if source is None and target.is_file() and sha256_hex(target.read_bytes()) == rev.sha256:
            fetched.append((rev, target.read_bytes()))  # already the locked bytes: nothing to fetch
            continue
        data, _ = fetch(rev.url if source is None else source_location(source, version))
        digest = sha256_hex(data)
        if digest != rev.sha256:
            raise GeneratorError(
                f"{version}: sha256 {digest[:12]}… does not match the lock ({rev.sha256[:12]}…)",
                hint="the source holds another revision; use --update-lock to adopt it",
            )
        fetched.append((rev, data))
    report = []
    for rev, data in fetched:
        target = lock.schema_path(rev.version)
        status = "unchanged" if target.is_file() and target.read_bytes() == data else "installed"
        if status == "installed":
            atomic_write(target, data)
        report.append((rev.version, status))
    return report
