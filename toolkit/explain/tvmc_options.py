"""tvmc's complaint about a codegen's option whose target the command did not name.

tvmc (python/tvm/driver/tvmc/target.py) adds a ``--target-KIND-OPTION`` argument for every
option of every BYOC codegen the build registers (composite_target.py), and
``validate_targets`` refuses one given without its target KIND. When the option is not on the
command line the log shows, tvmc filled it in itself from the codegen's defaults: the build
was made with the codegen's USE_ option, which tk's table of TVM's options names.
"""

from __future__ import annotations

import re

from toolkit.explain import optional_libs


def option_without_target(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``Passed --target-mrvl-accelerator_config but did not specify mrvl target``."""
    kind, opt = groups.get("kind", ""), groups.get("opt", "")
    flag = f"--target-{kind}-{opt}"
    passed = re.search(rf"(?:^|\s){re.escape(flag)}[=\s]", text.replace(
        f"Passed {flag}", ""), re.MULTILINE)
    # codegen "ethos-n" is built by USE_ETHOSN
    found = optional_libs.option_for(kind) or optional_libs.option_for(kind.replace("-", ""))
    built = f" (this TVM was built with {found[0]} ON, the option that compiles the {kind} " \
            f"codegen in)" if found else ""
    if passed:
        return (f"the command passes {flag}, an option of the {kind} codegen, but its --target "
                f"does not name {kind}: tvmc's validate_targets (tvmc/target.py) applies a "
                f"codegen's options only to its own target.",
                f"add {kind} to --target (e.g. --target=\"{kind}, llvm\"), or drop {flag}")
    # without the command in the log, whether the user passed it is not known
    shown = re.search(r"tvmc\b[^\n]*\bcompile\b", text) is not None
    head = (f"{flag} is not on the command line the log shows: tvmc added it" if shown else
            f"unless the command passed {flag}, tvmc added it")
    return (f"{head} from the {kind} codegen's "
            f"default options, which it registers for every BYOC codegen in the build"
            f"{built}; its validate_targets (tvmc/target.py) then asks for the {kind} target "
            f"even though the compile does not use it.",
            f"name the {kind} target (--target=\"{kind}, llvm\"), or use a TVM built without "
            f"{found[0] if found else 'that codegen'} for this compile; a newer TVM's tvmc may "
            f"skip a codegen's defaults when only its default target is asked for")
