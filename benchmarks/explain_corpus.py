"""How often does tk explain name the cause a public thread established? The corpus measure.

Reads tests/fixtures/explain/corpus (real logs from public TVM, MLC-LLM and TileLang threads;
SOURCES.md there cites each and says what counts as naming its cause), runs
``toolkit.explain.explain`` on each log and prints, per log, whether every required term is
in tk's answer, then the share named per set and collection round. ``--set dev`` is what
development may look at (the earlier rounds' logs, their held-out parts included once their
round was measured, and the newest round's development half); ``--set held-out`` is the
newest round's held-out half, kept out of development and measured once, at the end. Also
prints each log's CPU time, and for a miss the top finding tk gave instead (or that it found
nothing).

    python benchmarks/explain_corpus.py [--set dev|held-out|all] [--verbose]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from explain_corpus import DEV, HELD_OUT, answer_text, cases, named  # noqa: E402

from toolkit.explain import explain  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=["dev", "held-out", "all"], default="dev")
    parser.add_argument("--verbose", action="store_true", help="print tk's answer for misses")
    args = parser.parse_args()
    wanted = {"dev": {DEV}, "held-out": {HELD_OUT}, "all": {DEV, HELD_OUT}}[args.set]
    explain("warm up: load the indexes once")
    totals: dict[str, list[int]] = {}
    for case in cases():
        if case.split not in wanted:
            continue
        start = time.process_time()
        findings = explain(case.log.read_text())
        cpu = time.process_time() - start
        missing = named(case, answer_text(findings))
        hit = totals.setdefault(f"{case.split}, round {case.round}", [0, 0])
        hit[0] += not missing
        hit[1] += 1
        mark = "named " if not missing else "MISSED"
        # A miss with a finding says another cause (a wrong answer, or a cause beside the one
        # the thread established); a miss without one says it does not know.
        said = f"; tk said {findings[0].id} ({findings[0].origin})" if findings else \
            "; tk found nothing"
        why = "" if not missing else "  lacks " + "; ".join("|".join(g) for g in missing) + said
        print(f"{mark} {case.split:8} {case.round} {case.log.name:42} {cpu * 1000:6.1f} ms{why}")
        if missing and args.verbose:
            for f in findings:
                print(f"         [{f.origin}] {f.title} / {f.cause} / {f.fix}")
    if not totals:
        print("no logs in this set (a held-out half becomes development data once measured: "
              "tests/fixtures/explain/corpus/SOURCES.md)")
    for split, (ok, n) in sorted(totals.items()):
        print(f"{split}: {ok}/{n} named ({100 * ok / n:.0f}%)")
    if len(totals) > 1:
        ok, n = (sum(v[i] for v in totals.values()) for i in (0, 1))
        print(f"all of these: {ok}/{n} named ({100 * ok / n:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
