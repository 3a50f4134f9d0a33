"""The public corpus of real failure logs (tests/fixtures/explain/corpus) and how an answer is
judged: SOURCES.md there says where each log came from, the cause its thread established, the
terms an answer must contain and whether the log is held out of development."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).parent / "fixtures" / "explain" / "corpus"
HELD_OUT, DEV = "held out", "dev"


@dataclass(frozen=True)
class Case:
    log: Path
    thread: str
    cause: str
    terms: tuple[tuple[str, ...], ...]  # every group must match; any term of a group does
    split: str  # DEV or HELD_OUT
    round: int  # the collection round (1: c01-c44, 2: c45-c71, 3: c72-c92, 4: c93-c116, 5: c117-c141,
    # 6: c142-c165, 7: c166-c189, 8: c190-c213, 9: c214-c238, 10: c239-c258, 11: c259-c270,
    # 12: c271-c289, 13: c290-c309, 14: c310-c337, 15: c338-c360, 16: c361-c382)
    measured: bool = False  # held out in its round and measured: now development data


def cases() -> list[Case]:
    """Every row of SOURCES.md's table, in its order."""
    out = []
    for line in (CORPUS / "SOURCES.md").read_text().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 5 or not cells[0].endswith(".log"):
            continue
        log, thread, cause, must, label = cells
        groups = tuple(tuple(t.strip() for t in g.replace("\\|", "|").split("|") if t.strip())
                       for g in must.split(";"))
        # "dev", "dev (held out in round 1)", "dev (round 2)", "dev (held out in round 2)",
        # "dev (round 3)", "dev (held out in round 3)", "dev (round 4)", "dev (held out in round 4)",
        # "dev (round 5)", "dev (held out in round 5)", "dev (round 6)", "dev (held out in round 6)",
        # "dev (round 7)", "dev (held out in round 7)", "dev (round 8)", "dev (held out in round 8)",
        # "dev (round 9)", "dev (held out in round 9)", "dev (round 10)", "held out (round 10)":
        # the round named is the one that collected it
        split = HELD_OUT if label.startswith(HELD_OUT) else DEV
        got = re.search(r"round (\d+)", label)  # a log held out in round N was collected then
        out.append(Case(CORPUS / log, thread, cause, groups, split,
                        int(got.group(1)) if got else 1, "held out in round" in label))
    return out


def answer_text(findings) -> str:
    """What tk says about a log: every finding's title, cause and fix (not the excerpt it
    quotes from the log)."""
    return "\n".join(f"{f.title}\n{f.cause}\n{f.fix}" for f in findings)


def named(case: Case, answer: str) -> list[tuple[str, ...]]:
    """The term groups the answer misses ([] when it names the cause)."""
    low = answer.lower()
    return [g for g in case.terms if not any(t.lower() in low for t in g)]
