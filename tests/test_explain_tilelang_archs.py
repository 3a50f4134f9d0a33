"""A CUDA architecture the installed TileLang release does not dispatch on
(toolkit/explain/tilelang_archs.py): the answer names the releases whose architecture checks
cover it, from a table generated from TileLang's release tags (scripts/tilelang_archs.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from explain_tables import generate, git, top_said

from toolkit.explain import explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
REPO = Path(__file__).resolve().parent.parent
SAMPLE = (FIXTURES / "tilelang-arch-not-supported.log").read_text()


def test_an_arch_names_the_first_tilelang_release_that_covers_it() -> None:
    rule, said = top_said(SAMPLE)
    assert rule == "tilelang-arch-not-supported"
    assert "sm_103" in said and "v0.1.7.post3" in said and "0.1.6" in said


def test_an_arch_every_release_covers_is_not_claimed_and_an_unknown_one_has_no_release() -> None:
    hopper = SAMPLE.replace("sm_103", "sm_90a")
    assert "tilelang-arch-not-supported" not in {f.id for f in explain(hopper)}
    rule, said = top_said(SAMPLE.replace("sm_103", "sm_150"))
    assert rule == "tilelang-arch-not-supported" and "no release does yet" in said


def test_tilelang_table_is_generated_from_release_tags(tmp_path: Path) -> None:
    repo = tmp_path / "tilelang"
    (repo / "src" / "target").mkdir(parents=True)
    git(repo, "init", "-q")
    utils = repo / "src" / "target" / "utils.cc"
    hopper = ("bool TargetIsCuda(Target target) { return true; }\n"
              "bool TargetIsHopper(Target target) {\n  if (!TargetIsCuda(target))\n"
              "    return false;\n  int arch = GetArchInt(target);\n  return arch >= 90%s;\n}\n")
    utils.write_text(hopper % "")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v0.1.0")
    utils.write_text(hopper % " && arch < 100" + hopper.replace("Hopper", "Sm100").replace(
        "90%s", "100 && arch <= 110"))
    git(repo, "commit", "-qam", "two")
    git(repo, "tag", "0.1.1")
    git(repo, "tag", "v0.1.1.post1")
    releases = generate("tilelang_archs.py", repo)["releases"]
    both = [["TargetIsHopper", 90, 100], ["TargetIsSm100", 100, 111]]
    assert releases == [{"tag": "v0.1.0", "cuda_archs": [["TargetIsHopper", 90, None]]},
                        {"tag": "0.1.1", "cuda_archs": both},
                        {"tag": "v0.1.1.post1", "cuda_archs": both}]
    # the shipped table holds what tile-ai/tilelang says of v0.1.6.post1: no sm_100
    shipped = json.loads((REPO / "toolkit/data/explain/tilelang_archs.json").read_text())
    post1 = next(r for r in shipped["releases"] if r["tag"] == "v0.1.6.post1")
    assert not any(lo <= 100 < (hi or 10**3) for _, lo, hi in post1["cuda_archs"])
