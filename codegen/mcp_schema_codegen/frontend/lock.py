"""The schema lock: which revisions exist, their era, and the exact bytes expected.

``schema/lock.json`` lists every revision with its era, sha256, size and pinned upstream
URL. ``sync`` copies (from a directory) or downloads (from a URL) each schema, checks it
against the lock and installs it as ``schema/<version>/schema.json``; ``update`` adopts a
new revision into the lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp_schema_codegen.errors import GeneratorError

Era = Literal["legacy", "modern"]
LOCK_NAME = "lock.json"


@dataclass(frozen=True)
class LockedRevision:
    version: str
    era: Era
    sha256: str
    size: int
    url: str


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
            raise GeneratorError(
                f"revision {version!r} is not in the lock {self.path} (known: {known})",
                hint="add it with `mcp-codegen schema sync --from DIR|URL --update-lock "
                f"--version {version} --era legacy|modern`",
            ) from None

    def schema_path(self, version: str) -> Path:
        return self.schema_dir / version / "schema.json"

    def read_schema(self, version: str) -> tuple[bytes, LockedRevision]:
        """The verified bytes of one synced revision."""
        rev = self.revision(version)
        path = self.schema_path(version)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise GeneratorError(
                f"schema {version} is not synced: {path} does not exist",
                hint="run `mcp-codegen schema sync --from DIR|URL`",
            ) from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != rev.sha256:
            raise GeneratorError(
                f"{path} has sha256 {digest[:12]}…, the lock expects {rev.sha256[:12]}…",
                hint="re-run `mcp-codegen schema sync`, or adopt it with --update-lock",
            )
        return data, rev


def load_lock(schema_dir: Path) -> Lock:
    path = schema_dir / LOCK_NAME
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GeneratorError(
            f"no schema lock at {path}",
            hint="run from a project with schema/lock.json, or pass --schema-dir",
        ) from None
    except json.JSONDecodeError as exc:
        raise GeneratorError(f"{path} is not valid JSON: {exc}") from None
    try:
        revisions = {
            version: LockedRevision(
                version=version,
                era=entry["era"],
                sha256=entry["sha256"],
                size=int(entry["size"]),
                url=entry["url"],
            )
            for version, entry in sorted(raw["versions"].items())
        }
        template = str(raw["upstream"]["url_template"])
    except (KeyError, TypeError, ValueError) as exc:
        raise GeneratorError(f"{path} is malformed: missing or bad {exc}") from None
    for rev in revisions.values():
        if not ("v" + rev.version.replace("-", "_")).isidentifier():
            raise GeneratorError(f"{path}: revision {rev.version!r} must be letters, digits and '-' only")
        if rev.era not in ("legacy", "modern"):
            raise GeneratorError(f"{path}: revision {rev.version} has unknown era {rev.era!r}")
    return Lock(path=path, url_template=template, revisions=revisions)


def _fetch(source: str, version: str) -> bytes:
    if "://" in source:
        url = (
            source.rstrip("/") + f"/{version}/schema.json"
            if "{version}" not in source
            else source.format(version=version)
        )
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                data: bytes = response.read()
                return data
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(exc, urllib.error.HTTPError):
                reason = f"HTTP {exc.code} {exc.reason}"
            raise GeneratorError(
                f"cannot download {url}: {reason}",
                hint="check the network, or sync from a local copy with --from DIR",
            ) from None
    path = Path(source) / version / "schema.json"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise GeneratorError(f"{path} does not exist", hint="--from DIR must hold <version>/schema.json") from None


def _install(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".schema-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sync(
    lock: Lock,
    source: str | None,
    versions: list[str] | None = None,
) -> list[tuple[str, str]]:
    """Fetch, verify and install schemas; returns (version, status) pairs.

    All revisions are fetched and verified before any is installed, so a mismatch leaves
    the schema directory as it was.
    """
    wanted = versions or list(lock.revisions)
    fetched: list[tuple[LockedRevision, bytes]] = []
    for version in wanted:
        rev = lock.revision(version)
        data = _fetch(source or rev.url, version)
        digest = hashlib.sha256(data).hexdigest()
        if digest != rev.sha256:
            raise GeneratorError(
                f"{version}: sha256 {digest[:12]}… does not match the lock ({rev.sha256[:12]}…)",
                hint="the source holds another revision; use --update-lock to adopt it",
            )
        fetched.append((rev, data))
    report = []
    for rev, data in fetched:
        target = lock.schema_path(rev.version)
        status = "unchanged" if target.exists() and target.read_bytes() == data else "installed"
        if status == "installed":
            _install(target, data)
        report.append((rev.version, status))
    return report


def update(lock: Lock, source: str, version: str, era: Era | None) -> LockedRevision:
    """Adopt ``version`` from ``source`` into the lock (new revision or new bytes)."""
    data = _fetch(source, version)
    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        raise GeneratorError(f"{version}: the downloaded schema is not JSON: {exc}") from None
    old = lock.revisions.get(version)
    chosen = era or (old.era if old else None)
    if chosen is None:
        raise GeneratorError(f"{version} is new to the lock", hint="say its era with --era legacy|modern")
    url = source if "://" in source else lock.url_template.format(version=version)
    if "://" in source and "{version}" not in source:
        url = source.rstrip("/") + f"/{version}/schema.json"
    rev = LockedRevision(version, chosen, hashlib.sha256(data).hexdigest(), len(data), url)
    raw: dict[str, Any] = json.loads(lock.path.read_text(encoding="utf-8"))
    raw["versions"][version] = {"era": rev.era, "sha256": rev.sha256, "size": rev.size, "url": rev.url}
    raw["versions"] = dict(sorted(raw["versions"].items()))
    _install(lock.path, (json.dumps(raw, indent=2) + "\n").encode())
    _install(lock.schema_path(version), data)
    return rev
