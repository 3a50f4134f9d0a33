"""Render a dump's function texts on first ask: compile its workload again, print each version.

``tk dump-ir`` prints nothing while it compiles (``recorder.py``): its index names function
versions by version keys. When a text is first asked for, this compiles the workload again as
the index's ``Recompile`` says, with the recorder in rendering mode: the same hooks, the same
keys, and each version whose key the index holds printed. Every key of the index must come
back; one the second compile did not produce (a build that is not deterministic) keeps its
version key and the note :data:`NOT_REPRODUCED` in place of a text, never another version's
text. Then the index is rewritten with text keys (so dumps compare as before), the pack and
the page are written and the manifest updated: later asks read them and compile nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from toolkit import outputs, stack
from toolkit.dumpir import directory, html, index
from toolkit.dumpir.in_tvm.dump import tvm_build
from toolkit.dumpir.in_tvm.recorder import Recorder, instrument
from toolkit.dumpir.store import PACK, FunctionStore, check_key, is_version_key
from toolkit.errors import TkError, TvmFailure, UserError
from toolkit.stack import compat
from toolkit.stack import workload as workloads

NOT_REPRODUCED = "not reproduced by the second compile"
PAGE = "index.html"


@dataclass
class Rendered:
    versions: int  # texts printed
    not_reproduced: list[str]  # version keys the second compile did not produce
    failure: str | None  # the second compile failed where the first did not


def check(dump_index: index.DumpIndex, where: Path) -> None:
    """Refuse (one line, exit 2) a dump whose workload file or TVM differs from the first
    compile's (the second compile would not be the same compile), or whose index names a
    key tk does not make (a crafted index), before compiling anything."""
    for key in dump_index.keys():
        check_key(key)
    # The texts are written into the dump as a dump is: refused now, not after compiling, if
    # that cannot be done (a read-only place, a file tk did not write).
    directory.check_output_dir(where)
    recompile = dump_index.recompile
    assert recompile is not None
    if recompile.workload_sha256 is not None:
        path = Path(recompile.workload)
        if not path.is_file():
            raise UserError(f"{where}'s texts are rendered by compiling {path} again, and it is "
                            "gone; dump again")
        now = hashlib.sha256(path.read_bytes()).hexdigest()
        if now != recompile.workload_sha256:
            raise UserError(f"{path} changed since {where} was dumped (sha256 "
                            f"{recompile.workload_sha256[:12]}, now {now[:12]}): its texts "
                            "would not be the ones recorded; dump again")
    version = getattr(compat.tvm(), "__version__", "unknown")
    build = tvm_build()
    if (version, build) != (recompile.tvm_version, recompile.tvm_build):
        raise UserError(f"{where} was dumped with TVM {recompile.tvm_version} "
                        f"({recompile.tvm_build or 'build unknown'}); this tk runs TVM {version} "
                        f"({build or 'build unknown'}): render its texts with that TVM, or "
                        "dump again")


def render(out: Path) -> Rendered:
    """Print the texts of the dump in ``out`` by compiling again; write pack, page, index."""
    dump_index = index.read(out)
    recompile = dump_index.recompile
    if recompile is None or recompile.rendered:
        raise TkError(f"{out} holds its texts already: nothing to render")
    check(dump_index, out)
    wanted = frozenset(k for k in dump_index.keys() if is_version_key(k))
    recorder = Recorder(pass_glob=recompile.passes, func_glob=recompile.funcs,
                        stop_before=recompile.stop_before, wanted=wanted)
    failure = None
    try:
        stack.compile(workloads.load(recompile.workload), recompile.target,
                      instruments=[instrument(recorder)], pass_config=recompile.pass_config)
    except TvmFailure as e:
        # The first compile failed (or stopped before a crashing pass) as well: expected.
        if dump_index.summary.get("status") != "failed":
            failure = str(e).splitlines()[0]
    try:
        recorder.finish()
    except Exception as e:  # noqa: BLE001 - a bug of ours, not a failure of the pass
        raise TkError(f"dump-ir's pass instrument failed: {type(e).__name__}: {e}") from e

    store = FunctionStore(out / PACK)
    store.keys()  # the generated sources the dump stored
    # A key is numbered by the order its versions appeared (versions alike but for the
    # functions they call share a hash): one the second compile made at another place than the
    # first is another version, and is not taken for it.
    placed = dump_index.first_seen()
    again = index.first_seen(recorder.input or {}, recorder.records)
    keys = {k: store.put(text) for k, text in recorder.texts.items()
            if placed.get(k) == again.get(k)}
    missing = sorted(wanted - keys.keys())
    for key in missing:
        store.put_note(key, f"# {key.partition(':')[2]}: {NOT_REPRODUCED} (version {key}); "
                       "its text is unknown\n")
    dump_index.rekey(keys)
    recompile.rendered = True
    recompile.not_reproduced = missing
    # Versions that print alike now share one entry: the count becomes the store's, as an
    # earlier tk's dump counted it.
    dump_index.summary["functions_stored"] = len(store.loaded())
    pack = store.pack()
    try:
        with outputs.users(out):
            directory.update(out, {
                index.INDEX: index.encode(dump_index),
                PACK: pack,
                PAGE: html.render(dump_index, pack).encode(),
            })
    except OSError as e:
        if e.errno in outputs.ENVIRONMENT:
            raise outputs.refused(e, f"the texts of {out}") from None
        raise
    return Rendered(len(keys), missing, failure)
