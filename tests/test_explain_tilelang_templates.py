"""A name TileLang's CUDA templates declare in some releases only, or use only on a CUDA new
enough (toolkit/explain/tilelang_templates.py), from a table generated from TileLang's release
tags and main (scripts/tilelang_templates.py)."""

from __future__ import annotations

from pathlib import Path

from explain_tables import generate, git, top_said

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def test_a_name_the_templates_gained_names_the_release_that_declares_it() -> None:
    rule, said = top_said((FIXTURES / "tilelang-template-name.log").read_text())
    assert rule == "tilelang-template-name"
    assert "src/tl_templates/cuda/cuda_fp8.h" in said and "upgrade TileLang to v0.1.6.post2" in said


def test_template_table_is_generated_from_release_tags_and_main(tmp_path: Path) -> None:
    repo = tmp_path / "tilelang"
    header = repo / "src" / "tl_templates" / "cuda" / "cuda_fp8.h"
    header.parent.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    header.write_text("#pragma once\nusing fp8_e4_t = __nv_fp8_e4m3;\nusing fp8_e8_t = "
                      "__nv_fp8_e8m0;\nTL_DEVICE int keep_me(int x) { return x; }\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v0.1.0")
    header.write_text(
        "#pragma once\nusing fp8_e4_t = __nv_fp8_e4m3;\n// __nv_fp8_e8m0 is only in CUDA 12.8+\n"
        "#if __CUDACC_VER_MAJOR__ > 12 || \\\n    (__CUDACC_VER_MAJOR__ == 12 && "
        "__CUDACC_VER_MINOR__ >= 8)\nusing fp8_e8_t = __nv_fp8_e8m0;\n#else\nstruct fp8_e8_t "
        "{ unsigned char data; };\n#endif\nTL_DEVICE int keep_me(int x) { return x; }\n"
        "TL_DEVICE fp8_e4_16_t make_fp8_e4_16_t(fp8_e4_t x0) { return {x0}; }\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "tag", "v0.1.1")
    table = generate("tilelang_templates.py", repo)
    assert table["versions"] == ["v0.1.0", "v0.1.1", "main"]
    # only what tells releases apart: keep_me and fp8_e4_t are in every one
    assert table["names"] == {"make_fp8_e4_16_t": ["tl_templates/cuda/cuda_fp8.h", "1,2"]}
    assert table["cuda"] == {"__nv_fp8_e8m0": ["12.8", "v0.1.1"]}
