// flow/src/place.cpp: see place.hpp.
#include "place.hpp"

#include <string_view>

#include <llvm/ADT/SmallPtrSet.h>

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

namespace {

// Memory the C++ runtime allocates (operator new, malloc, an exception object): DRAM, never
// a pool, so counted as the function's own, like its stack. Placement new (_ZnwmPv) is not
// among them: it returns its argument, a pool address.
bool allocated(const llvm::Value* v) {
    const auto* call = llvm::dyn_cast<llvm::CallBase>(v);
    const llvm::Function* f = call != nullptr ? call->getCalledFunction() : nullptr;
    if (f == nullptr) return false;
    const llvm::StringRef name = f->getName();
    return name == "_Znwm" || name == "_Znam" || name == "_ZnwmSt11align_val_t" || name == "_ZnamSt11align_val_t" ||
           name == "malloc" || name == "calloc" || name == "realloc" || name == "__cxa_allocate_exception";
}

}  // namespace

place place_of(const llvm::Value* address, const llvm::DataLayout& layout, passthrough_of through,
               canonical_of canonical) {
    place out;
    std::int64_t offset = 0;
    bool known = true;
    const llvm::Value* v = address;
    llvm::SmallPtrSet<const llvm::PHINode*, 4> phis;  // each cursor once
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
            out.log |= text == "ferrite.flow.log";
            v = ii->getArgOperand(0);
            continue;
        }
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(v); call != nullptr && through) {
            const llvm::Function* callee = call->getCalledFunction();
            const passthrough* p = callee != nullptr ? through(*callee) : nullptr;
            if (p != nullptr && p->arg < call->arg_size()) {
                out.skip |= p->skip;  // a getter of a volatile field (`root(k)`: v_.work_roots[k])
                if (p->offset)
                    offset += *p->offset;
                else
                    known = false;
                if (p->load) {  // a field getter: the object is the field's pointer
                    if (canonical) v = canonical(*call);
                    break;
                }
                v = call->getArgOperand(p->arg);
                continue;
            }
        }
        if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(v); phi != nullptr && phis.insert(phi).second) {
            // A loop's cursor (an iterator, `p = p + 1`): the object its first value not
            // derived from the cursor itself points into, somewhere in it.
            const llvm::Value* entry = nullptr;
            for (const llvm::Value* in : phi->incoming_values()) {
                const llvm::Value* base = in->stripPointerCasts();
                while (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(base))
                    base = gep->getPointerOperand()->stripPointerCasts();
                if (base != phi) {
                    entry = in;
                    break;
                }
            }
            if (entry != nullptr) {
                known = false;
                v = entry;
                continue;
            }
        }
        if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(v); load != nullptr && canonical) v = canonical(*load);
        break;
    }
    out.object = v;
    if (known) out.offset = offset;
    // The function's own stack, or the result object it returns (sret): a value, not memory
    // the function persists.
    const auto* arg = llvm::dyn_cast<llvm::Argument>(v);
    out.stack = llvm::isa<llvm::AllocaInst>(v) || (arg != nullptr && arg->hasStructRetAttr()) || allocated(v);
    out.global = llvm::isa<llvm::GlobalValue>(v);
    return out;
}

}  // namespace ferrite::flow
