/*!
 * \file device_api.cc
 * \brief The __NAME__ device: a "C-source accelerator" whose memory is host memory.
 *
 * TVM finds a device's DeviceAPI by name: `tvm.device("ext_dev")`, the Relax VM's allocations
 * for an ext_dev target and every copy to or from the device call the global function
 * `device_api.ext_dev`, which returns a DeviceAPI*. This library registers it when it is
 * loaded. The memory is plain host memory (posix_memalign), so the kernels the codegen emits
 * (python/__NAME__/codegen.py) read and write it directly; a real accelerator would map,
 * allocate and copy through its driver here.
 *
 * The counters (`__NAME__.device_stats`) show that work went through this device and not
 * the CPU's.
 */
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace __NAME__ {

using tvm::runtime::DeviceAPI;
using tvm::runtime::DeviceAttrKind;

struct Stats {
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> bytes_allocated{0};
  std::atomic<int64_t> frees{0};
  std::atomic<int64_t> copies_to_device{0};
  std::atomic<int64_t> copies_from_device{0};
};

Stats& GlobalStats() {
  static Stats* stats = new Stats();  // never destroyed: TVM may free tensors at exit
  return *stats;
}

class HostMemoryDeviceAPI final : public DeviceAPI {
 public:
  void SetDevice(DLDevice dev) final {}

  void GetAttr(DLDevice dev, DeviceAttrKind kind, tvm::ffi::Any* rv) final {
    if (kind == tvm::runtime::kExist) *rv = dev.device_id == 0 ? 1 : 0;  // one device
    if (kind == tvm::runtime::kDeviceName) *rv = tvm::ffi::String("__NAME__ (host memory)");
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment,
                       DLDataType type_hint) final {
    void* ptr = nullptr;
    size_t align = alignment < sizeof(void*) ? sizeof(void*) : alignment;
    if (posix_memalign(&ptr, align, nbytes == 0 ? 1 : nbytes) != 0) throw std::bad_alloc();
    GlobalStats().allocations++;
    GlobalStats().bytes_allocated += static_cast<int64_t>(nbytes);
    return ptr;
  }

  void FreeDataSpace(DLDevice dev, void* ptr) final {
    GlobalStats().frees++;
    std::free(ptr);
  }

  void StreamSync(DLDevice dev, TVMStreamHandle stream) final {}  // kernels run synchronously

  bool SupportsDevicePointerArithmeticsOnHost() final { return true; }

  static HostMemoryDeviceAPI* Global() {
    static auto* inst = new HostMemoryDeviceAPI();
    return inst;
  }

 protected:
  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t size, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,
                      TVMStreamHandle stream) final {
    if (dev_to.device_type == kDLExtDev) GlobalStats().copies_to_device++;
    if (dev_from.device_type == kDLExtDev) GlobalStats().copies_from_device++;
    std::memcpy(static_cast<char*>(to) + to_offset,
                static_cast<const char*>(from) + from_offset, size);
  }
};

tvm::ffi::Map<tvm::ffi::String, int64_t> DeviceStats() {
  Stats& s = GlobalStats();
  return {{"allocations", s.allocations.load()},
          {"bytes_allocated", s.bytes_allocated.load()},
          {"frees", s.frees.load()},
          {"copies_to_device", s.copies_to_device.load()},
          {"copies_from_device", s.copies_from_device.load()}};
}

}  // namespace __NAME__

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("device_api.ext_dev",
           []() -> void* { return static_cast<void*>(__NAME__::HostMemoryDeviceAPI::Global()); },
           "The DeviceAPI of ext_dev devices: __NAME__'s, over host memory.")
      .def("__NAME__.device_stats", __NAME__::DeviceStats,
           "What went through the __NAME__ device API since the library was loaded.");
}
