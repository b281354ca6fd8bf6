// flow/src/report.cpp: see report.hpp.
#include "report.hpp"

#include <algorithm>
#include <tuple>

#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Module.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace ferrite::flow {
namespace {

struct where {
    std::string file;
    unsigned line = 0;
    unsigned column = 0;
};

where where_of(const llvm::Instruction* inst) {
    where w;
    if (const llvm::DILocation* loc = inst->getDebugLoc().get()) {
        w.file = loc->getFilename().str();
        // Relative to the compilation's folder: kept as it is when that is where the report
        // is read (the compiler's own convention), made whole otherwise (a -p run).
        llvm::SmallString<256> here;
        const llvm::StringRef dir = loc->getDirectory();
        if (llvm::sys::path::is_relative(w.file) && !dir.empty() && !llvm::sys::fs::current_path(here) &&
            here.str() != dir) {
            llvm::SmallString<256> whole(dir);
            llvm::sys::path::append(whole, w.file);
            w.file = whole.str().str();
        }
        w.line = loc->getLine();
        w.column = loc->getColumn();
    } else {
        w.file = inst->getModule()->getSourceFileName();
    }
    return w;
}

}  // namespace

const char* pattern_name(pattern p) {
    switch (p) {
        case pattern::durability: return "durability";
        case pattern::pair: return "pair";
        case pattern::double_flush: return "double-flush";
        case pattern::log: return "log";
    }
    return "?";
}

std::string line_col(const llvm::Instruction* inst) {
    const where w = where_of(inst);
    if (w.line == 0) return "?";
    return std::to_string(w.line) + ":" + std::to_string(w.column);
}

void print_reports(llvm::raw_ostream& os, std::vector<report> reports, bool json) {
    struct row {
        where w;
        const report* r;
    };
    std::vector<row> rows;
    rows.reserve(reports.size());
    for (const auto& r : reports) rows.push_back({where_of(r.at), &r});
    auto key = [](const row& x) {
        return std::tie(x.w.file, x.w.line, x.w.column, x.r->kind, x.r->message);
    };
    std::sort(rows.begin(), rows.end(), [&](const row& a, const row& b) { return key(a) < key(b); });
    rows.erase(std::unique(rows.begin(), rows.end(), [&](const row& a, const row& b) { return key(a) == key(b); }),
               rows.end());
    for (const auto& x : rows) {
        const char* name = pattern_name(x.r->kind);
        if (json) {
            llvm::json::Object o{{"file", x.w.file},
                                 {"line", static_cast<std::int64_t>(x.w.line)},
                                 {"column", static_cast<std::int64_t>(x.w.column)},
                                 {"pattern", name},
                                 {"function", llvm::demangle(x.r->at->getFunction()->getName().str())},
                                 {"message", x.r->message}};
            os << llvm::json::Value(std::move(o)) << "\n";
        } else {
            os << x.w.file << ":" << x.w.line << ":" << x.w.column << ": warning: " << x.r->message
               << " [flow-" << name << "]\n";
        }
    }
}

}  // namespace ferrite::flow
