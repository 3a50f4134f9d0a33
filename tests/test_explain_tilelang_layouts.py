"""TileLang's LayoutInference finds no layout for a fragment (toolkit/explain/
tilelang_layouts.py). The samples are tests/fixtures/explain/tilelang-layout-not-inferred*."""

from __future__ import annotations

from pathlib import Path

from toolkit.explain import best, explain

FIXTURES = Path(__file__).parent / "fixtures" / "explain"


def test_no_candidate_layout_names_the_known_triggers_and_ways_out() -> None:
    top = best((FIXTURES / "tilelang-layout-not-inferred.log").read_text())
    assert top is not None and top.id == "tilelang-layout-not-inferred"
    assert "T.Parallel" in top.cause and "thread count does not divide" in top.cause
    assert "T.annotate_layout" in top.fix and "T.alloc_shared" in top.fix


def test_a_fragment_without_a_layout_is_named() -> None:
    top = best((FIXTURES / "tilelang-layout-not-inferred--fragment.log").read_text())
    assert top is not None and top.id == "tilelang-layout-not-inferred"
    assert "the fragment row_max a layout" in top.cause


def test_other_layout_words_are_not_claimed() -> None:
    text = "ValueError: no layout found for keyboard 'us'\n"
    assert "tilelang-layout-not-inferred" not in {f.id for f in explain(text)}
