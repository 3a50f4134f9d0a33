"""Stored builds on an OCI registry: what ``tk build push`` sends, what ``tk build pull`` and
``tk build``'s look-up fetch, and what a fetched build must prove before the store keeps it.

A build is one OCI artifact (``ARTIFACT_TYPE``), an image manifest whose config is OCI's empty
descriptor and whose layers are the build's own files, each a blob named by its sha256 (the
digest the store already keeps them under):

- every library the build wrote (``LIBRARY_TYPE``; its name in the title annotation; a
  symlink such as libfoo.so -> libfoo.so.1 is no blob: the record says where it points);
- the tree's tvm-ffi wheel, when the build has one (``WHEEL_TYPE``);
- the build record itself, ``manifest.json`` (``RECORD_TYPE``).

The manifest's annotations say what the build is without fetching anything (its id, plan,
tree key, commit, check, platform). Its tag is the build id and the platform it runs on
(``tag_for``): the same plan built from the same sources has the same id on every machine,
so a second machine finds the first one's build by computing its own key.

Fetching checks before it keeps: the manifest's digest; that it is a tk build, for this
platform, whose record is internally whole (its id is its plan's and tree's key, its plan
hashes to its plan hash) and names exactly the manifest's layers; every blob against its
digest and size as it is written. The caller (``toolkit.builds.driver``) then runs the same
post-build check a local build gets, and saves the record last: a build that fails any of it
is refused, and nothing of it stays (``discard``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import platform
import re
import shutil
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit import __version__
from toolkit.builds import oci, store
from toolkit.builds import python as pypkg
from toolkit.builds.oci import Reference, Untrusted
from toolkit.builds.recipes import BuildPlan
from toolkit.builds.record import BuildRecord, Pulled, SourceRecord
from toolkit.errors import TkError, UserError
from toolkit.events import Handler, Stage, ignore
from toolkit.outputs import ENVIRONMENT, sha256_file
from toolkit.paths import cache_root

ARTIFACT_TYPE = "application/vnd.tk.build.v1"
LIBRARY_TYPE = "application/vnd.tk.build.library.v1"
WHEEL_TYPE = "application/vnd.tk.build.wheel.v1+zip"
RECORD_TYPE = "application/vnd.tk.build.record.v1+json"
TITLE = "org.opencontainers.image.title"
ANNOTATION = "org.tk.build."
MAX_RECORD = 16 << 20


def platform_tag(python: str | None) -> str:
    """Where a build runs: the interpreter ABI its tvm-ffi package was built for (which names
    the machine too), else the OS and machine of its libraries."""
    return python or f"{sys.platform}-{platform.machine()}"


def tag_for(key: str, python: str | None) -> str:
    return f"{key}-{platform_tag(python)}"


def local_tag(key: str, with_python: bool) -> str:
    """The tag this machine's build ``key`` has (``with_python``: the build has the tree's
    tvm-ffi package, built for this interpreter)."""
    return tag_for(key, pypkg.python_tag() if with_python else None)


def describe(desc: dict[str, Any]) -> str:
    return desc.get("annotations", {}).get(TITLE) or desc.get("digest", "?")[:19]


@dataclass
class Pushed:
    reference: Reference  # with its tag and the manifest's digest
    blobs: int  # its layers and its (empty) config
    uploaded: int  # blobs the registry did not have yet
    bytes_uploaded: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"reference": str(self.reference), "digest": self.reference.digest,
                "blobs": self.blobs, "uploaded": self.uploaded,
                "bytes_uploaded": self.bytes_uploaded, "seconds": round(self.seconds, 3)}


def push(record: BuildRecord, repo: Reference, events: Handler = ignore) -> Pushed:
    """Send a stored build (verified by ``store.find``) to ``repo``, each blob once."""
    if repo.tag or repo.digest:
        raise UserError(f"{repo}: push to REGISTRY/REPOSITORY; tk names the tag (the build id "
                        "and its platform)")
    failed = store.check_failure(record)
    if failed:
        raise TkError(f"{failed}: not pushed")
    started = time.monotonic()
    client = oci.Registry(repo)
    with store.using(record.id):  # its libraries stay linked while they are read
        store.materialise(record)
        blobs: list[tuple[dict[str, Any], oci.Body]] = []
        for art in record.artifacts:
            if art.link is None:
                desc = {"mediaType": LIBRARY_TYPE, "digest": f"sha256:{art.sha256}",
                        "size": art.size, "annotations": {TITLE: art.name}}
                blobs.append((desc, opener(Path(art.path))))
        if record.python is not None:
            wheel = Path(record.python.wheel)
            if not wheel.is_file() or sha256_file(wheel) != record.python.sha256:
                raise TkError(f"the stored tvm-ffi wheel of build {record.id} ({wheel}) is gone "
                              f"or damaged: rebuild it with tk build --force -C "
                              f"{record.source.dir}")
            desc = {"mediaType": WHEEL_TYPE, "digest": f"sha256:{record.python.sha256}",
                    "size": wheel.stat().st_size, "annotations": {TITLE: wheel.name}}
            blobs.append((desc, opener(wheel)))
        body = json.dumps(record.to_json(), indent=2).encode()
        blobs.append(({"mediaType": RECORD_TYPE, "digest": oci.sha256_digest(body),
                       "size": len(body), "annotations": {TITLE: store.MANIFEST}},
                      lambda: body))
        empty = {"mediaType": oci.EMPTY_TYPE, "digest": oci.sha256_digest(oci.EMPTY), "size": 2}
        uploaded = sent = 0
        for desc, body_of in [(empty, lambda: oci.EMPTY), *blobs]:
            events(Stage(f"pushing {describe(desc)} ({desc['size']} bytes)"))
            if client.push_blob(desc["digest"], desc["size"], body_of):
                uploaded += 1
                sent += desc["size"]
    python = record.python.python if record.python else None
    manifest = {"schemaVersion": 2, "mediaType": oci.MANIFEST_TYPE,
                "artifactType": ARTIFACT_TYPE, "config": empty,
                "layers": [desc for desc, _ in blobs],
                "annotations": annotations(record, platform_tag(python))}
    tag = tag_for(record.id, python)
    digest = client.put_manifest(tag, json.dumps(manifest, indent=2).encode())
    return Pushed(repo.at(tag, digest), len(blobs) + 1, uploaded, sent, time.monotonic() - started)


def opener(path: Path) -> oci.Body:
    return lambda: path.open("rb")


def annotations(record: BuildRecord, where: str) -> dict[str, str]:
    """What the build is, readable from the manifest alone (``crane manifest``, a registry's
    web page); the whole record is a layer."""
    found = {
        "org.opencontainers.image.created": record.created,
        f"{ANNOTATION}id": record.id,
        f"{ANNOTATION}plan": record.plan_hash,
        f"{ANNOTATION}tree": record.source.tree_key,
        f"{ANNOTATION}recipes": " + ".join(record.recipes),
        f"{ANNOTATION}backend": record.backend,
        f"{ANNOTATION}check": ("unchecked" if record.check is None else
                               "ok" if record.check.ok else "failed"),
        f"{ANNOTATION}platform": where,
        f"{ANNOTATION}tk-version": __version__,
    }
    if record.source.commit:
        found["org.opencontainers.image.revision"] = record.source.commit
    return found


@dataclass
class Found:
    """A build in a registry: its manifest and record fetched and checked, its files not yet."""

    reference: Reference  # with the manifest's digest
    client: oci.Registry
    record: BuildRecord  # as its builder wrote it
    layers: dict[str, dict[str, Any]]  # digest -> descriptor
    plan: BuildPlan


def find(ref: Reference) -> Found | None:
    """The build ``ref`` names, None when the repository has no such tag or digest; refused
    (``Untrusted``) when it is not a whole tk build for this platform."""
    client = oci.Registry(ref)
    got = client.get_manifest(ref)
    if got is None:
        return None
    body, digest = got
    pinned = ref.at(ref.tag, digest)
    try:
        manifest = json.loads(body)
    except ValueError:
        raise Untrusted(f"{pinned}: the manifest is not JSON") from None
    if not isinstance(manifest, dict):
        raise Untrusted(f"{pinned}: the manifest is not a JSON object")
    if manifest.get("artifactType") != ARTIFACT_TYPE:
        kind = manifest.get("artifactType") or manifest.get("config", {}).get("mediaType")
        raise Untrusted(f"{pinned} is not a tk build ({kind or 'no artifact type'})")
    layers = manifest.get("layers") or []
    if not all(isinstance(d, dict) and oci.DIGEST.match(str(d.get("digest", "")))
               and isinstance(d.get("size"), int) for d in layers):
        raise Untrusted(f"{pinned}: a layer without a sha256 digest or a size")
    records = [d for d in layers if d.get("mediaType") == RECORD_TYPE]
    if len(records) != 1 or records[0]["size"] > MAX_RECORD:
        raise Untrusted(f"{pinned}: not one build record among its layers")
    record = fetch_record(client, pinned, records[0])
    plan = check_record(record, pinned, manifest, layers)
    return Found(pinned, client, record, {d["digest"]: d for d in layers}, plan)


def fetch_record(client: oci.Registry, ref: Reference, desc: dict[str, Any]) -> BuildRecord:
    tmp = store.temporary(cache_root() / "pulled-record.json")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        client.fetch_blob(desc["digest"], desc["size"], tmp)
        data = json.loads(tmp.read_text())
    except ValueError:
        raise Untrusted(f"{ref}: its build record is not JSON") from None
    finally:
        tmp.unlink(missing_ok=True)
    try:
        return BuildRecord.from_json(data)
    except (ValueError, KeyError, TypeError) as e:
        raise Untrusted(f"{ref}: its build record is not one this tk reads ({e})") from None


def check_record(record: BuildRecord, ref: Reference, manifest: dict[str, Any],
                 layers: list[dict[str, Any]]) -> BuildPlan:
    """The record is whole and names exactly the manifest's layers; its plan."""
    try:
        plan = BuildPlan.from_json(record.plan)
    except TypeError:
        raise Untrusted(f"{ref}: its record's plan is not one this tk reads") from None
    if plan.hash != record.plan_hash or \
            store.build_key(record.plan_hash, record.source.tree_key) != record.id:
        raise Untrusted(f"{ref}: its record's id is not the key of its plan and tree "
                        "(edited after the build)")
    notes = manifest.get("annotations") or {}
    if notes.get(f"{ANNOTATION}id") != record.id:
        raise Untrusted(f"{ref}: the manifest says build {notes.get(f'{ANNOTATION}id')}, its "
                        f"record {record.id}")
    here = platform_tag(pypkg.python_tag() if record.python else None)
    there = notes.get(f"{ANNOTATION}platform")
    if there != here or (record.python is not None and record.python.python != here):
        raise Untrusted(f"{ref} was built for {there}, this machine is {here}")
    if record.check is not None and not record.check.ok:
        raise Untrusted(f"{ref}: its builder's post-build check failed: "
                        f"{'; '.join(record.check.problems)}")
    wanted = {f"sha256:{a.sha256}": (LIBRARY_TYPE, a.size, a.name)
              for a in record.artifacts if a.link is None}
    if record.python is not None:
        wanted[f"sha256:{record.python.sha256}"] = (WHEEL_TYPE, None,
                                                    Path(record.python.wheel).name)
    files = {d["digest"]: (d.get("mediaType"), d["size"], describe(d))
             for d in layers if d.get("mediaType") != RECORD_TYPE}
    for digest, (kind, size, name) in wanted.items():
        got = files.get(digest)
        if got is None or got[0] != kind or (size is not None and got[1] != size) \
                or got[2] != name:
            raise Untrusted(f"{ref}: {name} of its record is not among its layers as recorded")
    extra = sorted(set(files) - set(wanted))
    if extra:
        raise Untrusted(f"{ref}: layer {files[extra[0]][2]} is none of its record's files")
    for art in record.artifacts:
        if art.link is not None and ("/" in art.link or "/" in art.name):
            raise Untrusted(f"{ref}: library link {art.name} -> {art.link} leaves its directory")
        if "/" in art.name or art.name in ("", ".", ".."):
            raise Untrusted(f"{ref}: {art.name!r} is not a library's file name")
    if record.python is not None and not re.fullmatch(r"[\w.+-]+\.whl",
                                                      Path(record.python.wheel).name):
        raise Untrusted(f"{ref}: {Path(record.python.wheel).name!r} is not a wheel's file name")
    return plan


@dataclass
class Fetched:
    record: BuildRecord  # for this machine, not yet checked nor saved
    added: list[Path] = field(default_factory=list)  # store objects this pull wrote
    bytes: int = 0
    seconds: float = 0.0


def install(found: Found, source: SourceRecord, events: Handler = ignore) -> Fetched:
    """Fetch the build's files into the store and lay out its entry, as a build would have:
    every blob checked as it is written, the record rewritten for this machine (its store
    paths, ``source`` for the tree it is for here) and returned unsaved - the entry is not a
    stored build until the caller checks and saves it. The caller holds the entry's lock."""
    started = time.monotonic()
    theirs = found.record
    record = dataclasses.replace(theirs)
    fetched = Fetched(record)
    entry = store.clear_entry(theirs.id)
    lib = entry / "lib"
    lib.mkdir()
    total = sum(d["size"] for d in found.layers.values() if d.get("mediaType") != RECORD_TYPE)
    events(Stage(f"pulling {theirs.id} from {found.reference} ({total} bytes)"))
    try:
        _lay_out(found, record, fetched, lib, entry)
    except BaseException:
        discard(theirs.id, fetched)
        raise
    store.stamp_verified(theirs.id, record.artifacts)
    fetched.seconds = time.monotonic() - started
    log = entry / "build.log"
    log.write_text(f"# tk build {theirs.id}: pulled from {found.reference}; built in "
                   f"{theirs.build_dir} from {theirs.source.dir} (its build log stayed there)\n")
    record.log = str(log)
    record.source = source
    record.pulled = Pulled(
        reference=str(found.reference), digest=found.reference.digest or "",
        at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        source_dir=theirs.source.dir, build_dir=theirs.build_dir,
        entry=str(Path(theirs.log).parent),
        provenance=theirs.check.provenance if theirs.check else None,
        timings={"pull": round(fetched.seconds, 3)})
    record.check = None
    record.env = store.env_of(record)
    return fetched


def _lay_out(found: Found, record: BuildRecord, fetched: Fetched, lib: Path, entry: Path) -> None:
    """The entry's lib/ (and python/) from the registry's blobs, and ``record``'s paths to them."""
    theirs = found.record
    try:
        artifacts = []
        for art in theirs.artifacts:
            dst = lib / art.name
            if art.link is not None:
                dst.symlink_to(art.link)
                artifacts.append(dataclasses.replace(art, path=str(dst)))
                continue
            fetch_object(found, f"sha256:{art.sha256}", dst, fetched)
            artifacts.append(dataclasses.replace(art, path=str(dst)))
        record.artifacts = artifacts
        if theirs.python is not None:
            # Under its digest: a wheel this machine built from the same tvm-ffi sources
            # keeps its own name and bytes (pip's wheels are not byte-for-byte reproducible).
            wheel = store.wheels_root() / "pulled" / theirs.python.sha256 / \
                Path(theirs.python.wheel).name
            wheel.parent.mkdir(parents=True, exist_ok=True)
            fetch_object(found, f"sha256:{theirs.python.sha256}", wheel, fetched)
            with zipfile.ZipFile(wheel) as zf:
                outside = [n for n in zf.namelist() if n.startswith("/") or ".." in n.split("/")]
            if outside:
                raise Untrusted(f"{found.reference}: its wheel writes outside its directory "
                                f"({outside[0]})")
            # A build here of the same tvm-ffi sources looks for its wheel under the key of
            # those sources, the directory the builder kept it in: it finds this one there.
            home = Path(theirs.python.wheel).parent.name
            if re.fullmatch(r"[0-9a-f]{16}-[\w.-]+", home) and \
                    not any((store.wheels_root() / home).glob("*.whl")):
                (store.wheels_root() / home).mkdir(parents=True, exist_ok=True)
                store.link_object(wheel, store.wheels_root() / home / wheel.name)
            ffi = lib / "libtvm_ffi.so"
            pypkg.install(wheel, entry / "python", ffi if ffi.is_file() else None,
                          theirs.python.sha256)
            record.python = dataclasses.replace(theirs.python, wheel=str(wheel),
                                                site=str(entry / "python"))
    except OSError as e:
        if e.errno not in ENVIRONMENT:
            raise
        raise store.store_error(e, theirs.id) from None


@store.serialised
def fetch_object(found: Found, digest: str, dst: Path, fetched: Fetched) -> None:
    """Link ``dst`` to the store object of blob ``digest``: the one the store has (checked),
    else one fetched into a temporary file, checked, and renamed into place. Packing waits
    meanwhile: an object with no link yet would look unused to it."""
    sha = digest.split(":", 1)[1]
    size = found.layers[digest]["size"]
    obj = store.object_path(sha)
    with store.packing(shared=True):
        if not (obj.exists() and obj.stat().st_size == size and sha256_file(obj) == sha):
            obj.parent.mkdir(parents=True, exist_ok=True)
            tmp = store.temporary(obj)
            try:
                found.client.fetch_blob(digest, size, tmp)
                tmp.chmod(0o555)  # read-only, as every stored object
                tmp.replace(obj)
            except Untrusted as e:
                raise Untrusted(f"{found.reference}: {describe(found.layers[digest])}: {e}: "
                                "refused, nothing of it stored") from None
            finally:
                tmp.unlink(missing_ok=True)
            fetched.added.append(obj)
            fetched.bytes += size
        store.link_object(obj, dst)


def discard(key: str, fetched: Fetched | None = None) -> None:
    """Take back a pull that did not end in a stored build: its entry, and the objects it
    wrote that no stored build links."""
    if store.entry_dir(key).is_dir():
        # All but its lock file, which the caller holds (tk build gc removes the rest).
        shutil.rmtree(store.clear_entry(key) / "python", ignore_errors=True)
    for obj in fetched.added if fetched else []:
        try:
            if os.stat(obj).st_nlink <= 1:
                obj.unlink()
        except FileNotFoundError:
            pass
