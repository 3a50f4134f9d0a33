"""Written by tk fork extract for the proof of __NAME__: the extension is imported as soon as
tvm is, so a check written against the fork runs unchanged on upstream TVM with the extension.
It then runs the sitecustomize it shadows, if there is one."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


class _AfterTVM(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "tvm":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def run_then_extension(module):
            run(module)
            importlib.import_module("__NAME__")

        spec.loader.exec_module = run_then_extension
        return spec


sys.meta_path.insert(0, _AfterTVM())

_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _HERE])
if _spec is not None and _spec.loader is not None:
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
