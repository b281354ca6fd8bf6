// flow/src/plugin.cpp: the LLVM 15 pass plugin: registers the `ferrite-flow` module pass.
//
// The pass reads the analysis roots and skipped functions from llvm.global.annotations
// (ferrite/pmem/flow.hpp's FERRITE_FLOW_ROOT and FERRITE_FLOW_SKIP), runs the analysis
// (analysis.hpp) on every function with a body but the skipped ones, and prints the reports
// to stdout: text, or JSON lines when FERRITE_FLOW_FORMAT=json. Functions are summarised
// callees first (summary.hpp), then each is analysed with its callees' summaries; ferrite's
// pmem primitives (primitives.hpp and their slow paths) are summarised but not reported on
// (they are the instructions events.hpp names, and their flushes of whole ranges are their job). The driver
// (flow/ferrite-flow.in) runs it as `opt -load-pass-plugin=... -passes=...,ferrite-flow`.
// It changes no IR. With FERRITE_FLOW_FUNCTIONS=PATH it also appends the functions it saw
// to PATH (list_functions); with FERRITE_FLOW_SUMMARIES=1 it prints each non-empty summary
// to stderr (debugging the analysis: print_summary).
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include "analysis.hpp"
#include "place.hpp"
#include "report.hpp"

namespace ferrite::flow {
namespace {

struct annotated {
    std::set<const llvm::Function*> roots, skipped;
};

annotated read_annotations(const llvm::Module& m) {
    annotated a;
    const auto* g = m.getGlobalVariable("llvm.global.annotations");
    if (g == nullptr || !g->hasInitializer()) return a;
    const auto* list = llvm::dyn_cast<llvm::ConstantArray>(g->getInitializer());
    if (list == nullptr) return a;
    for (const llvm::Use& u : list->operands()) {
        const auto* entry = llvm::dyn_cast<llvm::ConstantStruct>(u.get());
        if (entry == nullptr || entry->getNumOperands() < 2) continue;
        const auto* f = llvm::dyn_cast<llvm::Function>(entry->getOperand(0)->stripPointerCasts());
        if (f == nullptr) continue;
        const std::string_view text = annotation_text(entry->getOperand(1));
        if (text == "ferrite.flow.root") a.roots.insert(f);
        if (text == "ferrite.flow.skip") a.skipped.insert(f);
    }
    return a;
}

// The standard library's reference counts (std::shared_ptr's control block, reached from a
// shared_ptr field: a pool_ref copied) live on the heap, never in a pool: their code has no
// effect on persistent memory, as if it were FERRITE_FLOW_SKIP.
bool volatile_by_name(const llvm::Function& f) {
    const std::string name = llvm::demangle(f.getName().str());
    for (const std::string_view prefix : {"std::_Sp_counted_base", "std::__shared_count", "std::__weak_count",
                                          "__gnu_cxx::__exchange_and_add", "__gnu_cxx::__atomic_add"})
        if (std::string_view(name).substr(0, prefix.size()) == prefix) return true;
    return false;
}

bool summarised(const llvm::Function& f, const annotated& a) {
    return !f.isDeclaration() && a.skipped.count(&f) == 0 && !volatile_by_name(f);
}

// The primitives' own code (ferrite/pmem/primitives.hpp and its slow paths): by file, so
// that the rest of ferrite::pmem (the pool's roots table, its header) is reported on.
bool primitive(const llvm::Function& f) {
    const llvm::DISubprogram* sp = f.getSubprogram();
    if (sp == nullptr) {
        const std::string name = llvm::demangle(f.getName().str());
        return std::string_view(name).substr(0, 15) == "ferrite::pmem::";
    }
    const std::string_view file = sp->getFilename();
    return file.find("ferrite/pmem/primitives.hpp") != std::string_view::npos ||
           file.find("pmem/primitives.cpp") != std::string_view::npos;
}

bool reported(const llvm::Function& f, const annotated& a) {
    return summarised(f, a) && !primitive(f);
}

// Callees before callers (direct calls; a cycle is cut where the walk meets it again).
void post_order(const llvm::Function& f, std::set<const llvm::Function*>& seen,
                std::vector<const llvm::Function*>& order) {
    if (!seen.insert(&f).second) return;
    for (const auto& bb : f)
        for (const auto& inst : bb)
            if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
                if (const auto* callee = call->getCalledFunction(); callee != nullptr && !callee->isDeclaration())
                    post_order(*callee, seen, order);
    order.push_back(&f);
}

// Appends "unit<TAB>file<TAB>line" of every function with a body to `path` (one write per
// function, so parallel runs can share the file): which units hold which functions, for
// scripts/flow-agreement.py.
void list_functions(const llvm::Module& m, const std::vector<const llvm::Function*>& order, const char* path) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Append);
    if (ec) return;
    // One write of the whole listing: units analysed in parallel append to one file, and a
    // buffered stream's flushes at its buffer's boundaries interleaved their lines.
    std::string text;
    for (const llvm::Function* f : order)
        if (const llvm::DISubprogram* sp = f->getSubprogram())
            text.append(m.getSourceFileName()).append("\t").append(sp->getFilename().str()).append("\t")
                .append(std::to_string(sp->getLine())).append("\n");
    os.SetUnbuffered();
    os << text;
}

// One line per summary with an effect: flushes (arg[.field]+offset/len), fence, pendings,
// sentinel stores (after a fence: "fenced").
void print_summary(const llvm::Function& f, const summary& s) {
    if (s.flushes.empty() && s.pendings.empty() && !s.fences && s.sentinels.empty() && !s.returns) return;
    auto& os = llvm::errs();
    os << llvm::demangle(f.getName().str()) << ":";
    const auto path = [&](unsigned arg, const std::optional<std::int64_t>& field) {
        os << " a" << arg;
        if (field) os << "." << *field;
    };
    for (const auto& r : s.flushes) {
        os << " flush";
        path(r.arg, r.field);
        if (r.field2) os << "." << *r.field2;
        os << "+" << (r.offset ? std::to_string(*r.offset) : "?") << "/" << (r.len ? std::to_string(*r.len) : "?");
    }
    if (s.fences) os << " fence";
    for (const auto& p : s.pendings) {
        os << (p.written_back ? " flushed" : " written");
        path(p.arg, p.field);
        if (p.field2) os << "." << *p.field2;
        os << "@" << (p.line ? std::to_string(*p.line) : "?");
    }
    for (const auto& st : s.sentinels) {
        os << (st.fenced_before ? " fenced-sentinel" : " sentinel");
        path(st.arg, st.field);
        os << "@" << (st.line ? std::to_string(*st.line) : "?");
    }
    if (const auto& r = s.returns) {  // an accessor (place.hpp's passthrough)
        os << " returns a" << r->arg;
        if (r->load) os << "." << *r->load;
        if (r->load2) os << "." << *r->load2;
        os << "+" << (r->offset ? std::to_string(*r->offset) : "?") << (r->skip ? " skip" : "");
    }
    os << "\n";
}

struct flow_pass : llvm::PassInfoMixin<flow_pass> {
    llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&) {
        const annotated a = read_annotations(m);
        std::set<const llvm::Function*> seen;
        std::vector<const llvm::Function*> order;
        for (const llvm::Function& f : m) post_order(f, seen, order);
        summaries known;
        for (const llvm::Function* f : order)
            if (summarised(*f, a)) known.emplace(f, summarise_function(*f, known));
        if (const char* dump = std::getenv("FERRITE_FLOW_SUMMARIES"); dump != nullptr && *dump == '1')
            for (const auto& [f, s] : known) print_summary(*f, s);
        std::vector<report> reports;
        for (const llvm::Function* f : order)
            if (reported(*f, a)) analyse_function(*f, a.roots.count(f) != 0, known, reports);
        if (const char* list = std::getenv("FERRITE_FLOW_FUNCTIONS")) list_functions(m, order, list);
        const char* format = std::getenv("FERRITE_FLOW_FORMAT");
        const bool json = format != nullptr && std::string_view(format) == "json";
        print_reports(llvm::outs(), std::move(reports), json);
        llvm::outs().flush();
        return llvm::PreservedAnalyses::all();
    }
};

}  // namespace
}  // namespace ferrite::flow

extern "C" LLVM_ATTRIBUTE_WEAK llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "ferrite-flow", "0.1", [](llvm::PassBuilder& pb) {
                pb.registerPipelineParsingCallback(
                    [](llvm::StringRef name, llvm::ModulePassManager& mpm,
                       llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
                        if (name != "ferrite-flow") return false;
                        mpm.addPass(ferrite::flow::flow_pass());
                        return true;
                    });
            }};
}
