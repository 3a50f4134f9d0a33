/*!
 * \file relax_pass.cc
 * \brief A Relax pass: record on every Relax function how many of its bindings are calls
 *        (attribute `__NAME__.num_calls`). Replace the lambda's body with your analysis or
 *        rewrite.
 *
 * Only what TVM's libraries export can be called from here: the apache-tvm wheel is built
 * with HIDE_PRIVATE_SYMBOLS, so functions and classes its headers declare without TVM_DLL
 * (relax::PostOrderVisit, relax::ExprVisitor / ExprMutator) are not there, and an extension
 * using them fails to load. This pass reads the IR's fields (inline in the headers) instead;
 * `tk ext build` says before compiling when a function it probes is not exported.
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ir/transform.h>
#include <tvm/relax/expr.h>
#include <tvm/relax/transform.h>

namespace __NAME__ {
namespace transform {

tvm::transform::Pass CountCalls() {
  auto pass_func = [](tvm::relax::Function func, tvm::IRModule,
                      tvm::transform::PassContext) -> tvm::relax::Function {
    int64_t calls = 0;
    if (const auto* seq = func->body.as<tvm::relax::SeqExprNode>()) {
      for (const tvm::relax::BindingBlock& block : seq->blocks) {
        for (const tvm::relax::Binding& binding : block->bindings) {
          const auto* bound = binding.as<tvm::relax::VarBindingNode>();
          if (bound && bound->value.as<tvm::CallNode>()) ++calls;  // ir/expr.h's Call
        }
      }
    }
    return tvm::WithAttr(std::move(func), "__NAME__.num_calls", calls);
  };
  return tvm::relax::transform::CreateFunctionPass(pass_func, 0, "__NAME__.CountCalls", {});
}

}  // namespace transform
}  // namespace __NAME__

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("__NAME__.transform.CountCalls", __NAME__::transform::CountCalls);
}
