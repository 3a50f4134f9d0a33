/*!
 * \file tir_pass.cc
 * \brief A TIR pass: record on every PrimFunc how many buffer stores its body makes
 *        (attribute `__NAME__.num_stores`). Replace the visitor with your analysis, or the
 *        lambda's body with a rewrite (a tirx::StmtExprMutator, as src/tirx/transform/ does).
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ir/transform.h>

// TIR's namespace and headers are tvm::tirx / tvm/tirx since TVM 0.26, tvm::tir before.
#if __has_include(<tvm/tirx/transform.h>)
#include <tvm/tirx/stmt_functor.h>
#include <tvm/tirx/transform.h>
namespace tir = tvm::tirx;
#else
#include <tvm/tir/stmt_functor.h>
#include <tvm/tir/transform.h>
namespace tir = tvm::tir;
#endif

namespace __NAME__ {
namespace transform {

tvm::transform::Pass CountStores() {
  auto pass_func = [](tir::PrimFunc func, tvm::IRModule, tvm::transform::PassContext) -> tir::PrimFunc {
    int64_t stores = 0;
    tir::PostOrderVisit(func->body, [&stores](const tvm::ffi::ObjectRef& node) {
      if (node.as<tir::BufferStoreNode>()) ++stores;
    });
    return tvm::WithAttr(std::move(func), "__NAME__.num_stores", stores);
  };
  return tir::transform::CreatePrimFuncPass(pass_func, 0, "__NAME__.CountStores", {});
}

}  // namespace transform
}  // namespace __NAME__

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("__NAME__.transform.CountStores", __NAME__::transform::CountStores);
}
