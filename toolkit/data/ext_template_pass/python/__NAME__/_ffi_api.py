"""The library's global functions under ``__NAME__.transform.*``, as this module's attributes
(what TVM's own ``python/tvm/<area>/transform/_ffi_api.py`` files do)."""

import tvm_ffi

tvm_ffi.init_ffi_api("__NAME__.transform", __name__)
