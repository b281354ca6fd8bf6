// flow/src/place.cpp: see place.hpp.
#include "place.hpp"

#include <functional>
#include <string>
#include <string_view>

#include <llvm/Demangle/Demangle.h>

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/GetElementPtrTypeIterator.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Operator.h>

namespace ferrite::flow {

std::optional<std::int64_t> external_getter_key(const llvm::CallBase& call) {
    const llvm::Function* f = call.getCalledFunction();
    if (f == nullptr || !f->isDeclaration() || f->isIntrinsic() || call.arg_size() != 1 ||
        !call.getType()->isPointerTy() || !call.getArgOperand(0)->getType()->isPointerTy())
        return std::nullopt;
    const std::string name = llvm::demangle(f->getName().str());
    if (name.size() < 7 || name.compare(name.size() - 7, 7, ") const") != 0) return std::nullopt;
    // Far below any real field offset, one per function (a collision only merges two getters).
    return -(std::int64_t{1} << 40) - static_cast<std::int64_t>(std::hash<std::string>{}(name) % (std::uint64_t{1} << 30)) * 64;
}

bool external_getter(const llvm::CallBase& call) { return external_getter_key(call).has_value(); }

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

namespace {

// The walk's offset, from the address back to its object: exact (lo == hi), a range of
// first bytes behind a variable index into an array of a known count (lo..hi), within an
// element of line-multiple stride found behind it (element: outer offsets accumulate in
// `outer`), or lost.
struct offset_walk {
    enum class mode : std::uint8_t { exact, range, element, lost } m = mode::exact;
    std::int64_t lo = 0, hi = 0, stride = 0, outer = 0;
    std::optional<std::int64_t> lost_at;  // lo when an exact offset was lost

    void add(std::int64_t d) {
        if (m == mode::exact || m == mode::range) {
            lo += d;
            hi += d;
        } else if (m == mode::element) {
            outer += d;
        }
    }
    void lose() {
        if (m == mode::exact) lost_at = lo;
        m = mode::lost;
    }
    // A variable index over elements of `size` bytes; count: the array's length, if an array.
    void variable(std::int64_t size, std::optional<std::uint64_t> count) {
        const bool lines = size > 0 && size % line_bytes == 0;
        if (m == mode::element) {
            if (!lines) lose();  // an outer index over line-multiples keeps the element's lines
            return;
        }
        if (m == mode::lost) return;
        if (lines && lo >= 0 && hi < size) {
            m = mode::element;
            stride = size;
            return;
        }
        if (!count || *count == 0) {
            lose();
            return;
        }
        hi += static_cast<std::int64_t>(*count - 1) * size;
        m = mode::range;
    }
};

// A GEP's indices, right to left (the walk goes from the address back to the object).
void walk_gep(const llvm::GEPOperator& gep, const llvm::DataLayout& layout, offset_walk& w) {
    struct index {
        const llvm::Value* value;
        std::int64_t field_offset;  // a struct field's offset (struct index)
        std::int64_t size;          // the element's size (sequential index)
        std::optional<std::uint64_t> count;
        bool structure;
    };
    llvm::SmallVector<index, 4> indices;
    llvm::Type* container = nullptr;  // what the previous index indexed into
    for (auto it = llvm::gep_type_begin(gep), end = llvm::gep_type_end(gep); it != end; ++it) {
        index i{it.getOperand(), 0, 0, std::nullopt, false};
        if (llvm::StructType* st = it.getStructTypeOrNull()) {
            i.structure = true;
            const auto* c = llvm::dyn_cast<llvm::ConstantInt>(it.getOperand());
            if (c == nullptr) {
                w.lose();
                return;
            }
            i.field_offset = static_cast<std::int64_t>(
                layout.getStructLayout(st)->getElementOffset(static_cast<unsigned>(c->getZExtValue())));
            container = st->getElementType(static_cast<unsigned>(c->getZExtValue()));
        } else {
            i.size = static_cast<std::int64_t>(layout.getTypeAllocSize(it.getIndexedType()).getFixedSize());
            if (const auto* at = llvm::dyn_cast_or_null<llvm::ArrayType>(container)) i.count = at->getNumElements();
            container = it.getIndexedType();
        }
        indices.push_back(i);
    }
    for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
        if (it->structure) {
            w.add(it->field_offset);
        } else if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(it->value)) {
            w.add(c->getSExtValue() * it->size);
        } else {
            w.variable(it->size, it->count);
        }
    }
}

}  // namespace

place place_of(const llvm::Value* address, const llvm::DataLayout& layout, passthrough_of through,
               canonical_of canonical) {
    place out;
    offset_walk w;
    const llvm::Value* v = address;
    llvm::SmallPtrSet<const llvm::PHINode*, 4> phis;  // each cursor once
    for (;;) {
        v = v->stripPointerCasts();
        if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(v)) {
            walk_gep(*gep, layout, w);
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
                    w.add(*p->offset);
                else
                    w.lose();
                if (p->load) {  // a field getter: the object is the field's pointer
                    if (canonical) v = canonical(*call);
                    break;
                }
                v = call->getArgOperand(p->arg);
                continue;
            }
        }
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(v); call != nullptr && canonical && external_getter(*call)) {
            v = canonical(*call);  // a read of a pseudo-field of its object (external_getter)
            break;
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
                w.lose();
                v = entry;
                continue;
            }
        }
        if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(v); load != nullptr && canonical) v = canonical(*load);
        break;
    }
    out.object = v;
    if (w.m == offset_walk::mode::exact) out.offset = w.lo;
    if (w.m == offset_walk::mode::lost) out.field_in_element = w.lost_at;
    if (w.m == offset_walk::mode::element && w.outer % line_bytes == 0) {
        out.stride = w.stride;
        out.elem_lo = w.lo;
        out.elem_hi = w.hi;
    }
    // The function's own stack, or the result object it returns (sret): a value, not memory
    // the function persists.
    const auto* arg = llvm::dyn_cast<llvm::Argument>(v);
    out.stack = llvm::isa<llvm::AllocaInst>(v) || (arg != nullptr && arg->hasStructRetAttr()) || allocated(v);
    out.global = llvm::isa<llvm::GlobalValue>(v);
    return out;
}

}  // namespace ferrite::flow
