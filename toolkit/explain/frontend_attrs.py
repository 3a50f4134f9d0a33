"""A model's operator attribute that a TVM frontend passes on to an op that does not take it.

TVM's importers (python/tvm/relay/frontend/*.py) convert a node's attributes with AttrCvt
(relay/frontend/common.py), which passes every attribute it neither renames nor ignores on to
the op as a keyword. A framework release that adds an attribute to an operator (TensorFlow
1.14's ``half_pixel_centers`` on resize) then reaches the op as an unexpected keyword: the
model is newer than the frontend.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS

_CONVERTER = re.compile(r"relay/frontend/common\.py\"?, line \d+, in __call__")
_FRONTEND = re.compile(r"relay/frontend/(?P<fw>\w+)\.py\"?, line \d+")
# The framework each Relay importer reads, for its name in the answer.
FRAMEWORKS = {"tensorflow": "TensorFlow", "tflite": "TFLite", "onnx": "ONNX", "keras": "Keras",
              "mxnet": "MXNet", "caffe2": "Caffe2", "coreml": "CoreML", "darknet": "Darknet",
              "pytorch": "PyTorch", "paddlepaddle": "PaddlePaddle", "caffe": "Caffe",
              "oneflow": "OneFlow"}


def passed_attribute(groups: dict[str, str], text: str) -> tuple[str, str]:
    """``resize() got an unexpected keyword argument 'half_pixel_centers'`` raised by AttrCvt."""
    op, kw = groups.get("op", ""), groups.get("kw", "")
    if not _CONVERTER.search(text):
        return NOT_THIS
    frontends = [m.group("fw") for m in _FRONTEND.finditer(text) if m.group("fw") != "common"]
    fw = FRAMEWORKS.get(frontends[-1], frontends[-1]) if frontends else "the source framework"
    return (f"the model's operator carries the attribute {kw}, which this TVM's {fw} frontend "
            f"neither converts nor ignores: its attribute converter (AttrCvt, "
            f"relay/frontend/common.py) passes it on, and Relay's {op}() takes no such "
            f"argument. The model was written by a newer {fw} than this frontend knows (a "
            f"release that added {kw} to the operator).",
            f"update TVM (a newer frontend converts or drops {kw}), or export the model with "
            f"the older {fw} this TVM's frontend was written for")
