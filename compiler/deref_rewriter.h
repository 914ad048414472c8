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
// reads through a pointer inside the named functions turned into
// __mt_rd/__mt_deref/__mt_idx; returns "" when nothing needed rewriting.
std::string rewrite_pointer_reads(clang::ASTContext &context,
                                  const std::set<std::string> &functions);

}  // namespace mt
