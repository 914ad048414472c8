// Rewrites pointer dereferences in script expressions into probe reads,
// for program types that cannot load kernel memory directly.
#pragma once
#include <set>
#include <string>

namespace clang {
class ASTContext;
}

namespace mt {

// Returns the main file's text with every `p->path`, `*p` and `p[i]` that
// reads through a pointer inside `functions` turned into
// __mt_rd/__mt_ld/__mt_deref/__mt_idx; inside `typed_functions` (programs
// that load their BTF-typed pointers directly), only the reads through a
// pointer cast from an untyped value (a number, a `void *`) and the pointers
// read through those. Returns "" when nothing needed rewriting.
std::string rewrite_pointer_reads(clang::ASTContext &context,
                                  const std::set<std::string> &functions,
                                  const std::set<std::string> &typed_functions = {});

}  // namespace mt
