// ferrite/pmem/flow.hpp: annotations for ferrite-flow, the static persistence checker (flow/).
//
// The checker (docs/flow.md) follows FlowNvm ([NVM], chapter 5): a dataflow analysis over
// LLVM IR that finds persistence bugs without running the code. FlowNvm's annotations are
// nvm_fnc (analysis root), nvm_cst(skip), sentinel and dur_field; ferrite's are the macros
// below. They expand to clang `annotate` attributes only when FERRITE_FLOW is defined (the
// ferrite-flow driver defines it) and to nothing in every other build, so they cost nothing
// and change no layout or code.
//
//   FERRITE_FLOW_ROOT      on a function: an analysis root. Every store through memory that
//                          is not the function's own stack is a store to persistent memory,
//                          and the return is a durability point: every such store must be
//                          written back and fenced before it.
//   FERRITE_FLOW_SENTINEL  on a field: its store marks the data written before it valid
//                          (the pair pattern): that data must be written back and fenced
//                          first. Tracked in every function, root or not.
//   FERRITE_FLOW_DURABLE   on a field: persistent even outside a root; a store to it must be
//                          durable at the function's return.
//   FERRITE_FLOW_LOG       on a field: a log word (an undo log's tag that arms it): its store
//                          must be written back and fenced before any later persistent store
//                          to another line ("log before modify"). Tracked in every function.
//   FERRITE_FLOW_SENTINEL_AT(p)  a statement: the word at p is a sentinel in this function (an
//                          anchor reached through a parameter, which cannot carry a field
//                          annotation); its stores are checked as a sentinel field's, in this
//                          function and, through its summary, at every call of it.
//   FERRITE_FLOW_STORED_ELSEWHERE(p, n)  a statement: the n bytes at p hold stores another
//                          call (or thread) made and left for this function to make durable
//                          (a write-back-only function: a log's seal, link-free's
//                          flush_delete). The analysis counts them as stored here, so the
//                          write-back and fence that follow must cover them by the return
//                          (or, in a helper, be handed to its callers as pending stores).
//   FERRITE_FLOW_SKIP      on a field: volatile (its stores are not tracked), and so are the
//                          elements a getter of it returns (a std::vector's operator[]); a
//                          pointer loaded from it may still point into the pool. On a
//                          function: not analysed (calls to it do nothing).
#pragma once

#if defined(FERRITE_FLOW)
#define FERRITE_FLOW_ROOT __attribute__((annotate("ferrite.flow.root")))
#define FERRITE_FLOW_SENTINEL __attribute__((annotate("ferrite.flow.sentinel")))
#define FERRITE_FLOW_DURABLE __attribute__((annotate("ferrite.flow.durable")))
#define FERRITE_FLOW_SKIP __attribute__((annotate("ferrite.flow.skip")))
#define FERRITE_FLOW_LOG __attribute__((annotate("ferrite.flow.log")))
// A declaration only: the driver compiles to IR and never links.
extern "C" void ferrite_flow_sentinel_at(const volatile void*) noexcept;
#define FERRITE_FLOW_SENTINEL_AT(p) ::ferrite_flow_sentinel_at(p)
extern "C" void ferrite_flow_stored_elsewhere(const volatile void*, unsigned long) noexcept;
#define FERRITE_FLOW_STORED_ELSEWHERE(p, n) ::ferrite_flow_stored_elsewhere((p), (n))
#else
#define FERRITE_FLOW_ROOT
#define FERRITE_FLOW_SENTINEL
#define FERRITE_FLOW_DURABLE
#define FERRITE_FLOW_SKIP
#define FERRITE_FLOW_LOG
#define FERRITE_FLOW_SENTINEL_AT(p) static_cast<void>(0)
#define FERRITE_FLOW_STORED_ELSEWHERE(p, n) static_cast<void>(0)
#endif
