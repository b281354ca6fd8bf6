// flow/src/events.cpp: see events.hpp.
#include "events.hpp"

#include <string>
#include <string_view>

#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>

namespace ferrite::flow {
namespace {

using llvm::CallBase;

event ev(event_kind kind, const llvm::Value* ptr = nullptr, std::optional<std::uint64_t> len = std::nullopt,
         const llvm::Value* stored = nullptr) {
    return {kind, ptr, len, stored};
}

std::optional<std::uint64_t> const_len(const llvm::Value* v) {
    if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) return c->getZExtValue();
    return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

const llvm::Value* arg(const CallBase& call, unsigned i) {
    return i < call.arg_size() ? call.getArgOperand(i) : nullptr;
}

// The first pointer operand of an inline asm call (the line it flushes or stores to).
const llvm::Value* first_pointer(const CallBase& call) {
    for (const auto& a : call.args())
        if (a->getType()->isPointerTy()) return a.get();
    return nullptr;
}

std::vector<event> asm_events(const CallBase& call, const llvm::InlineAsm& code) {
    const std::string& s = code.getAsmString();
    auto has = [&](const char* word) { return s.find(word) != std::string::npos; };
    std::vector<event> out;
    if (has("clwb") || has("clflushopt")) {
        if (const auto* p = first_pointer(call)) out.push_back(ev(event_kind::flush, p, 1));
    } else if (has("clflush")) {
        if (const auto* p = first_pointer(call)) out.push_back(ev(event_kind::sync_flush, p, 1));
    } else if (has("movnti")) {
        if (const auto* p = first_pointer(call)) out.push_back(ev(event_kind::nt_write, p, 8));
    }
    if (has("sfence") || has("mfence")) out.push_back(ev(event_kind::fence));
    return out;
}

// Calls by name: ferrite's primitives (demangled), x86 intrinsic wrappers, libpmem(obj).
std::vector<event> call_events(const CallBase& call, std::string_view name) {
    using k = event_kind;
    const std::string demangled = llvm::demangle(std::string(name));
    const std::string_view d = demangled;
    if (starts_with(d, "ferrite::pmem::")) {
        const std::string_view f = d.substr(15);
        if (starts_with(f, "pwb(")) return {ev(k::flush, arg(call, 0), 1)};
        if (starts_with(f, "pwb_range(")) return {ev(k::flush, arg(call, 0), const_len(arg(call, 1)))};
        if (starts_with(f, "pwb_range_pair(")) {
            const auto n = const_len(arg(call, 2));
            return {ev(k::flush, arg(call, 0), n), ev(k::flush, arg(call, 1), n)};
        }
        if (starts_with(f, "pfence(") || starts_with(f, "psync(")) return {ev(k::fence)};
        if (starts_with(f, "nt_store(")) return {ev(k::nt_write, arg(call, 0), 8)};
        if (starts_with(f, "nt_memcpy(")) return {ev(k::nt_write, arg(call, 0), const_len(arg(call, 2)))};
        // Whole lines copied with NT stores: each its own write-back, pending until a fence.
        if (starts_with(f, "nt_copy_lines(")) return {ev(k::nt_write, arg(call, 0), const_len(arg(call, 2)))};
        return {};
    }
    if (starts_with(d, "_mm_clwb(") || starts_with(d, "_mm_clflushopt(")) return {ev(k::flush, arg(call, 0), 1)};
    if (starts_with(d, "_mm_clflush(")) return {ev(k::sync_flush, arg(call, 0), 1)};
    if (starts_with(d, "_mm_sfence(") || starts_with(d, "_mm_mfence(")) return {ev(k::fence)};
    if (starts_with(d, "_mm_stream_si64(")) return {ev(k::nt_write, arg(call, 0), 8)};
    if (starts_with(d, "_mm_stream_si32(")) return {ev(k::nt_write, arg(call, 0), 4)};
    // libpmem
    if (d == "pmem_flush") return {ev(k::flush, arg(call, 0), const_len(arg(call, 1)))};
    if (d == "pmem_persist" || d == "pmem_deep_persist")
        return {ev(k::persist, arg(call, 0), const_len(arg(call, 1)))};
    if (d == "pmem_drain") return {ev(k::fence)};
    if (starts_with(d, "pmem_mem")) {  // pmem_memcpy/memmove/memset[_persist|_nodrain]
        const auto n = const_len(arg(call, 2));
        const bool nodrain = d.find("_nodrain") != std::string_view::npos;
        return {ev(k::write, arg(call, 0), n), ev(nodrain ? k::flush : k::persist, arg(call, 0), n)};
    }
    // libpmemobj: the pool handle comes first
    if (d == "pmemobj_flush") return {ev(k::flush, arg(call, 1), const_len(arg(call, 2)))};
    if (d == "pmemobj_persist") return {ev(k::persist, arg(call, 1), const_len(arg(call, 2)))};
    if (d == "pmemobj_drain") return {ev(k::fence)};
    if (starts_with(d, "pmemobj_mem")) {  // pmemobj_memcpy/memset[_persist]
        const auto n = const_len(arg(call, 3));
        return {ev(k::write, arg(call, 1), n), ev(k::persist, arg(call, 1), n)};
    }
    return {};
}

std::vector<event> intrinsic_events(const llvm::IntrinsicInst& ii) {
    using k = event_kind;
    switch (ii.getIntrinsicID()) {
        case llvm::Intrinsic::x86_clwb:
        case llvm::Intrinsic::x86_clflushopt: return {ev(k::flush, ii.getArgOperand(0), 1)};
        case llvm::Intrinsic::x86_sse2_clflush: return {ev(k::sync_flush, ii.getArgOperand(0), 1)};
        case llvm::Intrinsic::x86_sse_sfence:
        case llvm::Intrinsic::x86_sse2_mfence: return {ev(k::fence)};
        default: break;
    }
    if (const auto* mi = llvm::dyn_cast<llvm::MemIntrinsic>(&ii))
        return {ev(k::write, mi->getRawDest(), const_len(mi->getLength()))};
    return {};  // lifetime markers, annotations, debug info: no event
}

std::uint64_t store_size(const llvm::Instruction& inst, const llvm::Type* t) {
    return inst.getModule()->getDataLayout().getTypeStoreSize(const_cast<llvm::Type*>(t)).getFixedSize();
}

}  // namespace

std::vector<event> events_of(const llvm::Instruction& inst) {
    using k = event_kind;
    if (const auto* st = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
        const auto size = store_size(inst, st->getValueOperand()->getType());
        const bool nt = st->getMetadata(llvm::LLVMContext::MD_nontemporal) != nullptr;
        return {ev(nt ? k::nt_write : k::write, st->getPointerOperand(), size, st->getValueOperand())};
    }
    if (const auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst))
        return {ev(k::write, rmw->getPointerOperand(), store_size(inst, rmw->getValOperand()->getType()),
                 rmw->getValOperand())};
    if (const auto* cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst))
        return {ev(k::write, cas->getPointerOperand(), store_size(inst, cas->getNewValOperand()->getType()),
                 cas->getNewValOperand())};
    if (const auto* ii = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) return intrinsic_events(*ii);
    if (const auto* call = llvm::dyn_cast<CallBase>(&inst)) {
        if (const auto* code = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()))
            return asm_events(*call, *code);
        if (const auto* f = call->getCalledFunction()) return call_events(*call, f->getName());
    }
    return {};
}

}  // namespace ferrite::flow
