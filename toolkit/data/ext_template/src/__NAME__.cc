/*!
 * \file __NAME__.cc
 * \brief Global functions of the __NAME__ extension, registered with tvm-ffi when the
 *        library is loaded (import __NAME__ does it through toolkit.loader).
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/c_backend_api.h>

#include <cstdint>
#include <cstring>

namespace __NAME__ {

int64_t AddOne(int64_t x) { return x + 1; }

tvm::ffi::String Greet(tvm::ffi::String who) { return "hello " + std::string(who) + " from __NAME__"; }

/*! \brief Add `value` to every element of a float32 CPU tensor, in place. */
void AddInplace(tvm::ffi::TensorView x, double value) {
  TVM_FFI_CHECK(x.device().device_type == kDLCPU, ValueError) << "__NAME__.add_inplace: expects a CPU tensor";
  TVM_FFI_CHECK(x.dtype().code == kDLFloat && x.dtype().bits == 32, TypeError)
      << "__NAME__.add_inplace: expects float32";
  float* data = static_cast<float*>(x.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) data[i] += static_cast<float>(value);
}

/*!
 * \brief Sum of a float32 CPU tensor computed in a scratch buffer from TVM's runtime
 *        workspace allocator: the part of the sample that uses libtvm_runtime itself.
 */
double ScratchSum(tvm::ffi::TensorView x) {
  TVM_FFI_CHECK(x.device().device_type == kDLCPU && x.dtype().bits == 32, ValueError)
      << "__NAME__.scratch_sum: expects a float32 CPU tensor";
  size_t nbytes = static_cast<size_t>(x.numel()) * sizeof(float);
  void* scratch = TVMBackendAllocWorkspace(kDLCPU, 0, nbytes, kDLFloat, 32);
  TVM_FFI_CHECK(scratch != nullptr, RuntimeError) << "workspace allocation failed";
  std::memcpy(scratch, x.data_ptr(), nbytes);
  double total = 0;
  for (int64_t i = 0; i < x.numel(); ++i) total += static_cast<float*>(scratch)[i];
  TVMBackendFreeWorkspace(kDLCPU, 0, scratch);
  return total;
}

}  // namespace __NAME__

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("__NAME__.add_one", __NAME__::AddOne, "Return x + 1.")
      .def("__NAME__.greet", __NAME__::Greet, "Say hello.")
      .def("__NAME__.add_inplace", __NAME__::AddInplace, "x += value for a float32 CPU tensor.")
      .def("__NAME__.scratch_sum", __NAME__::ScratchSum, "Sum through a TVM workspace buffer.");
}
