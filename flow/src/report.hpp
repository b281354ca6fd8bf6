// flow/src/report.hpp: one finding of ferrite-flow and its two output formats.
//
// Text: the compiler's `file:line:col: warning: message [flow-<pattern>]`, so that editors
// and CI logs treat it like any warning. JSON: one object per line (the driver gathers
// them into one array): {"file", "line", "column", "pattern", "function", "message"}.
// A report points at the instruction to fix (the store that is not durable, the sentinel
// store, the second write-back); the message names the other end's line:column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Instruction;
class raw_ostream;
}  // namespace llvm

namespace ferrite::flow {

enum class pattern : std::uint8_t { durability, pair, double_flush, log };

const char* pattern_name(pattern p);

struct report {
    pattern kind;
    const llvm::Instruction* at;  // where the report points
    std::string message;
};

// "line:col" of an instruction's debug location ("?" without one).
std::string line_col(const llvm::Instruction* inst);

// Prints the reports sorted by file, line, column and pattern, duplicates dropped.
void print_reports(llvm::raw_ostream& os, std::vector<report> reports, bool json);

}  // namespace ferrite::flow
