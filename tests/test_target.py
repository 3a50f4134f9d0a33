"""Targets in the old string form and the dict/JSON form."""

from __future__ import annotations

import pytest

from toolkit import target_spec as target
from toolkit.errors import UserError
from toolkit.stack import target as tvm_target


def test_parse_string_with_options_to_dict():
    assert target.parse("cuda -arch=sm_80 -max_num_threads=512") == {
        "kind": "cuda", "arch": "sm_80", "max_num_threads": "512"}
    assert target.parse("llvm") == "llvm"
    assert target.parse('{"kind": "llvm", "mcpu": "skylake"}') == {"kind": "llvm", "mcpu": "skylake"}


@pytest.mark.parametrize("bad", ["", "{not json", '{"arch": "sm_80"}', "llvm mcpu"])
def test_parse_rejects_malformed(bad):
    with pytest.raises(UserError):
        target.parse(bad)


def test_string_form_reaches_tvm_with_typed_options():
    t = tvm_target.to_tvm("llvm -mcpu=skylake -mattr=+avx2,+fma -num-cores=2")
    assert t.kind.name == "llvm"
    assert str(t.attrs["mcpu"]) == "skylake"
    assert [str(a) for a in t.attrs["mattr"]] == ["+avx2", "+fma"]
    assert int(t.attrs["num-cores"]) == 2


def test_json_form_reaches_tvm():
    t = tvm_target.to_tvm('{"kind": "cuda", "arch": "sm_80"}')
    assert t.kind.name == "cuda" and tvm_target.is_gpu(t)
    assert str(t.attrs["arch"]) == "sm_80"


def test_unknown_option_is_user_error_naming_it():
    with pytest.raises(UserError, match="foo"):
        tvm_target.to_tvm("cuda -foo=3")


def test_absent_device_is_refused(absent_gpu):
    with pytest.raises(UserError, match=f"no {absent_gpu} device"):
        tvm_target.device_for(tvm_target.to_tvm(absent_gpu))


def test_a_target_is_parsed_once_and_passed_down(tmp_path):
    """Commands resolve the target at the edge; everything below takes the object as it is."""
    from toolkit import stack
    from toolkit.dumpir.in_tvm import dump
    from toolkit.stack import workload

    t = tvm_target.resolve("llvm -mcpu=skylake")
    assert tvm_target.resolve(t) is t
    assert (t.spec, t.kind, t.gpu) == ("llvm -mcpu=skylake", "llvm", False)
    assert tvm_target.resolve({"kind": "llvm"}).spec == '{"kind": "llvm"}'
    wl = workload.load("builtin:mlp")
    compiled = stack.compile(wl, t)
    assert compiled.target is t.tvm and compiled.target_spec == t.spec
    result = dump.dump(wl, t, tmp_path / "dump")  # the same loaded workload, the same target
    assert result.failure is None and result.summary["target"] == t.spec
