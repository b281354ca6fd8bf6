// flow/src/place.cpp: see place.hpp.
#include "place.hpp"

#include <string_view>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Operator.h>

namespace ferrite::flow {

const char* annotation_text(const llvm::Value* global_string) {
    const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(global_string->stripPointerCasts());
    if (g == nullptr || !g->hasInitializer()) return "";
    const auto* data = llvm::dyn_cast<llvm::ConstantDataArray>(g->getInitializer());
    if (data == nullptr || !data->isCString()) return "";
    return data->getAsCString().data();
}

place place_of(const llvm::Value* address, const llvm::DataLayout& layout, passthrough_of through) {
    place out;
    std::int64_t offset = 0;
    bool known = true;
    const llvm::Value* v = address;
    for (;;) {
        v = v->stripPointerCasts();
        if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(v)) {
            llvm::APInt delta(layout.getIndexTypeSizeInBits(gep->getType()), 0);
            if (gep->accumulateConstantOffset(layout, delta))
                offset += delta.getSExtValue();
            else
                known = false;
            v = gep->getPointerOperand();
            continue;
        }
        if (const auto* ii = llvm::dyn_cast<llvm::IntrinsicInst>(v);
            ii != nullptr && ii->getIntrinsicID() == llvm::Intrinsic::ptr_annotation) {
            const std::string_view text = annotation_text(ii->getArgOperand(1));
            out.sentinel |= text == "ferrite.flow.sentinel";
            out.durable |= text == "ferrite.flow.durable";
            out.skip |= text == "ferrite.flow.skip";
            v = ii->getArgOperand(0);
            continue;
        }
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(v); call != nullptr && through) {
            const llvm::Function* callee = call->getCalledFunction();
            const passthrough* p = callee != nullptr ? through(*callee) : nullptr;
            if (p != nullptr && p->arg < call->arg_size()) {
                if (p->offset)
                    offset += *p->offset;
                else
                    known = false;
                v = call->getArgOperand(p->arg);
                continue;
            }
        }
        break;
    }
    out.object = v;
    if (known) out.offset = offset;
    out.stack = llvm::isa<llvm::AllocaInst>(v);
    out.global = llvm::isa<llvm::GlobalValue>(v);
    return out;
}

}  // namespace ferrite::flow
