/*!
 * \file device_module.cc
 * \brief The __NAME__ device module: the kernels the code generator compiled, as a runtime module.
 *
 * `target.build.ext_dev` (python/__NAME__/codegen.py) prints the device functions as C,
 * compiles them into a shared object and calls `__NAME__.module_create(source, binary)`. The
 * host code imports the module this returns and finds each kernel by name through
 * `GetFunction` (the `__tvm_ffi_<kernel>` symbol of the shared object). The module keeps the C
 * (`inspect_source`, `tk compile --emit-source`) and the shared object's bytes
 * (`SaveToBytes`): `export_library` stores them in the exported library, and loading that
 * library calls `ffi.Module.load_from_bytes.__NAME__`, registered here, to map the kernels
 * again - so load this extension before loading a model compiled for it.
 */
#include <dlfcn.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace __NAME__ {

using tvm::ffi::Bytes;
using tvm::ffi::Function;
using tvm::ffi::Module;
using tvm::ffi::ModuleObj;
using tvm::ffi::Object;
using tvm::ffi::ObjectPtr;
using tvm::ffi::Optional;
using tvm::ffi::String;

class KernelModuleObj : public ModuleObj {
 public:
  KernelModuleObj(std::string source, std::string binary)
      : source_(std::move(source)), binary_(std::move(binary)) {
    // dlopen needs a file: write the shared object out, map it, remove the file.
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/__NAME__-kernels-XXXXXX";
    int fd = mkstemp(path.data());
    TVM_FFI_CHECK(fd >= 0, RuntimeError) << "__NAME__: cannot create " << path;
    bool written = write(fd, binary_.data(), binary_.size()) ==
                   static_cast<ssize_t>(binary_.size());
    close(fd);
    if (written) handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string why = handle_ ? "" : (written ? dlerror() : "short write");
    unlink(path.c_str());
    TVM_FFI_CHECK(handle_ != nullptr, RuntimeError) << "__NAME__: cannot load kernels: " << why;
  }

  ~KernelModuleObj() {
    if (handle_) dlclose(handle_);
  }

  const char* kind() const final { return "__NAME__"; }

  int GetPropertyMask() const final {
    return Module::kBinarySerializable | Module::kRunnable;
  }

  Optional<Function> GetFunction(const String& name) final {
    void* symbol = dlsym(handle_, ("__tvm_ffi_" + std::string(name)).c_str());
    if (symbol == nullptr) return std::nullopt;
    // The function keeps this module (and so the mapped kernels) alive.
    auto* keep = new ObjectPtr<Object>(tvm::ffi::GetObjectPtr<Object>(this));
    return Function::FromExternC(keep, reinterpret_cast<TVMFFISafeCallType>(symbol),
                                 [](void* p) { delete static_cast<ObjectPtr<Object>*>(p); });
  }

  Bytes SaveToBytes() const final {
    std::string out;
    for (const std::string* part : {&source_, &binary_}) {
      uint64_t n = part->size();
      out.append(reinterpret_cast<const char*>(&n), sizeof(n));
      out.append(*part);
    }
    return Bytes(out);
  }

  String InspectSource(const String& format) const final { return source_; }

  static Module Load(const Bytes& bytes) {
    std::string data = bytes;
    std::string parts[2];
    size_t at = 0;
    for (std::string& part : parts) {
      uint64_t n = 0;
      TVM_FFI_CHECK(at + sizeof(n) <= data.size(), ValueError) << "__NAME__: truncated module";
      std::memcpy(&n, data.data() + at, sizeof(n));
      at += sizeof(n);
      TVM_FFI_CHECK(at + n <= data.size(), ValueError) << "__NAME__: truncated module";
      part = data.substr(at, n);
      at += n;
    }
    return Module(tvm::ffi::make_object<KernelModuleObj>(parts[0], parts[1]));
  }

 private:
  std::string source_;
  std::string binary_;
  void* handle_ = nullptr;
};

}  // namespace __NAME__

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("__NAME__.module_create",
           [](tvm::ffi::String source, tvm::ffi::Bytes binary) {
             return tvm::ffi::Module(tvm::ffi::make_object<__NAME__::KernelModuleObj>(
                 std::string(source), std::string(binary)));
           },
           "The device module over compiled kernels (C source, shared object bytes).")
      .def("ffi.Module.load_from_bytes.__NAME__", __NAME__::KernelModuleObj::Load,
           "Load a __NAME__ device module saved in an exported library.");
}
