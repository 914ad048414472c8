// Walks Clang's AST to wrap pointer dereferences in script expressions in probe reads.
#include "compiler/deref_rewriter.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <clang/Rewrite/Core/Rewriter.h>

#include <optional>
#include <vector>

#include "bpf_headers/mt_abi.h"

namespace mt {

namespace {

using namespace clang;

bool is_map_lookup(const Expr *e) {
  e = e->IgnoreParenCasts();
  // map_ptr(m, k) is a statement expression whose value is the lookup.
  if (const auto *block = dyn_cast<StmtExpr>(e)) {
    const CompoundStmt *body = block->getSubStmt();
    const auto *last = body->body_empty() ? nullptr : dyn_cast<Expr>(body->body_back());
    return last && is_map_lookup(last);
  }
  const auto *call = dyn_cast<CallExpr>(e);
  if (!call)
    return false;
  // The helper is a pointer variable, so the callee is not a FunctionDecl.
  const auto *ref = dyn_cast<DeclRefExpr>(call->getCallee()->IgnoreParenCasts());
  return ref && ref->getDecl()->getName() == "bpf_map_lookup_elem";
}

// Whether `type` points at a map's value: a struct the engine declares for
// one (mt_abi.h), as a lookup's result has wherever it is kept.
bool points_at_map_value(QualType type) {
  const auto *pointer = type->getAs<PointerType>();
  const RecordDecl *record = pointer ? pointer->getPointeeType()->getAsRecordDecl() : nullptr;
  if (!record)
    return false;
  StringRef name = record->getName();
  return name.starts_with(MT_MAP_VALUE_TYPE_PREFIX) && name.ends_with(MT_MAP_VALUE_TYPE_SUFFIX);
}

// Whether the lvalue is reached through a pointer that needs a probe read.
bool needs_read(const Expr *lvalue);

// Whether `p` points at memory the program may load directly: the context
// (`__ctx`), the record (`__r`), map values (by lookup or by type), or
// lvalues not reached through any pointer (locals, arrays inside them).
bool is_direct_pointer(const Expr *p) {
  for (;;) {
    p = p->IgnoreParenCasts();
    const auto *bin = dyn_cast<BinaryOperator>(p);
    if (!bin || !bin->isAdditiveOp())
      break;
    p = bin->getLHS()->getType()->isPointerType() ? bin->getLHS() : bin->getRHS();
  }
  if (p->getType()->isArrayType())
    return !needs_read(p);
  if (const auto *op = dyn_cast<UnaryOperator>(p); op && op->getOpcode() == UO_AddrOf)
    return !needs_read(op->getSubExpr());
  if (is_map_lookup(p) || points_at_map_value(p->getType()))
    return true;
  const auto *ref = dyn_cast<DeclRefExpr>(p);
  const auto *var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  if (!var)
    return false;
  if (var->getName().starts_with("__"))
    return true;
  // Generated code keeps lookup results in locals it does not reassign.
  return var->hasLocalStorage() && var->getInit() && is_map_lookup(var->getInit());
}

// The pointer through which `lvalue` is accessed (the base of its nearest
// `->`, `*` or `[]`), or null when it names a variable or an rvalue's member.
const Expr *access_pointer(const Expr *lvalue) {
  for (const Expr *e = lvalue->IgnoreParens();;) {
    if (const auto *member = dyn_cast<MemberExpr>(e)) {
      if (member->isArrow())
        return member->getBase();
      e = member->getBase()->IgnoreParens();
    } else if (const auto *op = dyn_cast<UnaryOperator>(e)) {
      return op->getOpcode() == UO_Deref ? op->getSubExpr() : nullptr;
    } else if (const auto *sub = dyn_cast<ArraySubscriptExpr>(e)) {
      return sub->getBase();
    } else {
      return nullptr;
    }
  }
}

bool needs_read(const Expr *lvalue) {
  const Expr *pointer = access_pointer(lvalue);
  return pointer && !is_direct_pointer(pointer);
}

bool is_untyped(QualType type) {
  return type->isIntegerType() || (type->isPointerType() && type->getPointeeType()->isVoidType());
}

// In a program with typed pointers: whether `p` is a pointer the verifier
// does not know the type of, made by a cast from an untyped value (or a
// local initialized so), or read through such a pointer.
bool is_untyped_pointer(const Expr *p);

bool needs_typed_read(const Expr *lvalue) {
  const Expr *pointer = access_pointer(lvalue);
  return pointer && is_untyped_pointer(pointer);
}

bool is_untyped_pointer(const Expr *p) {
  p = p->IgnoreParens();
  if (const auto *cast = dyn_cast<ExplicitCastExpr>(p)) {
    const Expr *from = cast->getSubExpr()->IgnoreParenImpCasts();
    return is_untyped(from->getType()) || is_untyped_pointer(from);
  }
  const auto *load = dyn_cast<ImplicitCastExpr>(p);
  if (!load || load->getCastKind() != CK_LValueToRValue)
    return false;
  const Expr *lvalue = load->getSubExpr()->IgnoreParens();
  if (needs_typed_read(lvalue))
    return true;
  const auto *ref = dyn_cast<DeclRefExpr>(lvalue);
  const auto *var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  const Expr *init = var && var->hasLocalStorage() ? var->getInit() : nullptr;
  return init && (is_untyped(init->IgnoreParenImpCasts()->getType()) || is_untyped_pointer(init));
}

// The array a subscript indexes, or null when it indexes a pointer.
const Expr *subscripted_array(const ArraySubscriptExpr *sub) {
  const auto *cast = dyn_cast<ImplicitCastExpr>(sub->getBase()->IgnoreParens());
  if (!cast || cast->getCastKind() != CK_ArrayToPointerDecay)
    return nullptr;
  return cast->getSubExpr()->IgnoreParens();
}

// `p->path` where the path after the arrow is only `.member` and array
// subscripts, so that it can be read as __mt_rd(p, path).
const MemberExpr *arrow_root(const Expr *lvalue) {
  for (const Expr *e = lvalue->IgnoreParens();;) {
    if (const auto *member = dyn_cast<MemberExpr>(e)) {
      if (member->isArrow())
        return member;
      e = member->getBase()->IgnoreParens();
    } else if (const auto *sub = dyn_cast<ArraySubscriptExpr>(e)) {
      if (sub->getBase() != sub->getLHS())
        return nullptr;  // `i[arr]`
      e = subscripted_array(sub);
      if (!e)
        return nullptr;
    } else {
      return nullptr;
    }
  }
}

// Whether RECORD is one the generator defined from the kernel's BTF
// (MT_KERNEL_RECORD), or a script's own, relocated by CO-RE.
bool is_kernel_record(const RecordDecl *record) {
  if (record->hasAttr<BPFPreserveAccessIndexAttr>())
    return true;
  for (const auto *mark : record->specific_attrs<AnnotateAttr>())
    if (mark->getAnnotation() == MT_KERNEL_RECORD)
      return true;
  return false;
}

// "struct NAME" (or union) when `pointer` points at a named kernel type,
// which bpf_rdonly_cast can cast to; else "".
std::string kernel_record_of(const Expr *pointer) {
  QualType pointee = pointer->getType()->getPointeeType();
  const auto *record = pointee.isNull() ? nullptr : pointee->getAsRecordDecl();
  if (!record || !record->getIdentifier() || !is_kernel_record(record))
    return "";
  return std::string(record->isUnion() ? "union " : "struct ") + record->getName().str();
}

// Whether `lvalue` is at a constant offset from its arrow's base: members,
// and array subscripts that are constants.
bool at_constant_offset(const Expr *lvalue, const MemberExpr *arrow, const ASTContext &context) {
  for (const Expr *e = lvalue->IgnoreParens(); e != arrow;) {
    if (const auto *member = dyn_cast<MemberExpr>(e)) {
      e = member->getBase()->IgnoreParens();
    } else if (const auto *sub = dyn_cast<ArraySubscriptExpr>(e)) {
      if (!sub->getIdx()->isIntegerConstantExpr(context))
        return false;
      e = subscripted_array(sub);
    } else {
      return false;
    }
  }
  return true;
}

// Whether `lvalue` (reached from an arrow's base through members and
// subscripts) can be loaded through a cast pointer: it is at a constant
// offset (the verifier takes no other), and a number, or a pointer that is
// only the base of another arrow (a loaded pointer is one the verifier
// forbids arithmetic on, so it must go nowhere else).
bool loads_directly(const Expr *lvalue, const MemberExpr *arrow, bool arrow_base,
                    const ASTContext &context) {
  QualType type = lvalue->getType();
  return (type->isIntegralOrEnumerationType() || (arrow_base && type->isPointerType())) &&
         at_constant_offset(lvalue, arrow, context);
}

bool is_bit_field(const Expr *lvalue) {
  const auto *member = dyn_cast<MemberExpr>(lvalue->IgnoreParens());
  const auto *field = member ? dyn_cast<FieldDecl>(member->getMemberDecl()) : nullptr;
  return field && field->isBitField();
}

// Edits of one read, checked as a whole before any is applied. Opening
// text goes after text already inserted at its place and closing text
// before it, so that reads visited outside-in nest properly.
class ReadEdits {
 public:
  ReadEdits(const SourceManager &sm, const LangOptions &lang, FileID file)
      : sm_(sm), lang_(lang), file_(file) {}

  void open_before(const Expr *e, std::string text) {
    add(sm_.getExpansionRange(e->getBeginLoc()).getBegin(), 0, std::move(text), Kind::Open);
  }
  void close_after(const Expr *e, std::string text) {
    CharSourceRange range = sm_.getExpansionRange(e->getEndLoc());
    SourceLocation end = range.getEnd();
    if (range.isTokenRange())
      end = Lexer::getLocForEndOfToken(end, 0, sm_, lang_);
    add(end, 0, std::move(text), Kind::Close);
  }
  // Replaces a token the user wrote; a token from a macro fails the read.
  void replace_token(SourceLocation loc, unsigned length, std::string text) {
    add(loc.isFileID() ? loc : SourceLocation(), length, std::move(text), Kind::Replace);
  }
  void fail() { ok_ = false; }

  void apply(Rewriter &rewriter) const {
    if (!ok_)
      return;
    for (const Edit &edit : edits_)
      if (edit.loc.isInvalid() || !edit.loc.isFileID() || sm_.getFileID(edit.loc) != file_)
        return;
    for (const Edit &edit : edits_) {
      if (edit.kind == Kind::Replace)
        rewriter.ReplaceText(edit.loc, edit.length, edit.text);
      else
        rewriter.InsertText(edit.loc, edit.text, edit.kind == Kind::Open);
    }
  }

 private:
  enum class Kind { Open, Close, Replace };
  struct Edit {
    SourceLocation loc;
    unsigned length;
    std::string text;
    Kind kind;
  };
  void add(SourceLocation loc, unsigned length, std::string text, Kind kind) {
    edits_.push_back({loc, length, std::move(text), kind});
  }

  const SourceManager &sm_;
  const LangOptions &lang_;
  FileID file_;
  std::vector<Edit> edits_;
  bool ok_ = true;
};

class Visitor : public RecursiveASTVisitor<Visitor> {
 public:
  Visitor(ASTContext &context, Rewriter &rewriter)
      : context_(context),
        sm_(context.getSourceManager()),
        lang_(context.getLangOpts()),
        rewriter_(rewriter) {}

  void set_typed(bool typed) { typed_ = typed; }

  // Unevaluated operands read nothing.
  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *) { return true; }
  bool TraverseOffsetOfExpr(OffsetOfExpr *) { return true; }
  bool TraverseTypeOfExprTypeLoc(TypeOfExprTypeLoc) { return true; }
  bool TraverseTypeOfExprType(TypeOfExprType *) { return true; }
  bool TraverseGenericSelectionExpr(GenericSelectionExpr *e) {
    return e->isResultDependent() || TraverseStmt(e->getResultExpr());
  }

  // Only loads are reads: address computations, array decay and
  // assignment targets carry no lvalue-to-rvalue conversion.
  bool VisitImplicitCastExpr(ImplicitCastExpr *cast) {
    if (cast->getCastKind() != CK_LValueToRValue)
      return true;
    const Expr *lvalue = cast->getSubExpr()->IgnoreParens();
    if (typed_ && !needs_typed_read(lvalue)) {
      if (only_read_through(cast))
        walk_untrusted(lvalue);
    } else {
      rewrite_read(lvalue, is_arrow_base(cast));
    }
    return true;
  }

 private:
  // Whether `e` is the base of a `->` whose lvalue (with the members after
  // it) is loaded, so that e's value goes nowhere else.
  bool is_arrow_base(const Expr *e) const {
    bool in_arrow = false;
    for (;;) {
      const Expr *parent = parent_of(e);
      if (const auto *member = dyn_cast_or_null<MemberExpr>(parent)) {
        if (member->getBase() != e)
          return false;
        in_arrow = in_arrow || member->isArrow();
      } else if (const auto *cast = dyn_cast_or_null<ImplicitCastExpr>(parent)) {
        return in_arrow && cast->getCastKind() == CK_LValueToRValue;
      } else if (!isa_and_nonnull<ParenExpr>(parent)) {
        return false;
      }
      e = parent;
    }
  }

  // The one parent expression of `e`, or null.
  const Expr *parent_of(const Expr *e) const {
    auto parents = context_.getParents(*e);
    return parents.size() == 1 ? parents[0].get<Expr>() : nullptr;
  }

  // Whether the pointer `load` yields goes only where an untrusted copy
  // serves as well: to loads of what it points to (through casts to other
  // pointers), into a number, a comparison, or the record. Not to a helper,
  // a local or an address taken (&p->f->g), which may need it trusted.
  bool only_read_through(const Expr *load) const {
    for (const Expr *e = load;;) {
      const Expr *parent = parent_of(e);
      if (!parent)
        return false;
      if (isa<ParenExpr>(parent)) {
        e = parent;
      } else if (const auto *cast = dyn_cast<CastExpr>(parent)) {
        if (cast->getType()->isIntegerType())
          return true;
        if (!cast->getType()->isPointerType())
          return false;
        e = parent;
      } else if (const auto *member = dyn_cast<MemberExpr>(parent)) {
        return member->getBase() == e && member->isArrow() && is_loaded(member);
      } else if (const auto *op = dyn_cast<BinaryOperator>(parent)) {
        if (op->isComparisonOp())
          return true;
        const auto *target = dyn_cast<MemberExpr>(op->getLHS()->IgnoreParens());
        const auto *base =
            target ? dyn_cast<DeclRefExpr>(target->getBase()->IgnoreParenImpCasts()) : nullptr;
        return op->getOpcode() == BO_Assign && op->getRHS()->IgnoreParens() == e->IgnoreParens() &&
               base && base->getDecl()->getName() == "__r";
      } else {
        return false;
      }
    }
  }

  // Whether member access `e` (with the members after it) is loaded.
  bool is_loaded(const Expr *e) const {
    for (;;) {
      const Expr *parent = parent_of(e);
      if (const auto *member = dyn_cast_or_null<MemberExpr>(parent); member && !member->isArrow()) {
        e = parent;
      } else if (const auto *cast = dyn_cast_or_null<ImplicitCastExpr>(parent)) {
        return cast->getCastKind() == CK_LValueToRValue;
      } else if (isa_and_nonnull<ParenExpr>(parent)) {
        e = parent;
      } else {
        return false;
      }
    }
  }

  // Set per function: whether its typed pointers load directly.
  bool typed_ = false;

  void rewrite_read(const Expr *lvalue, bool arrow_base) {
    if (is_bit_field(lvalue) || !(typed_ ? needs_typed_read(lvalue) : needs_read(lvalue)))
      return;
    ReadEdits edits = edits_of(lvalue);
    if (const MemberExpr *arrow = arrow_root(lvalue)) {
      // p->path => __mt_rd(p, path), or __mt_ld(p, path, struct T) for a
      // number in a kernel struct (a plain load where the kernel allows)
      std::string record = kernel_record_of(arrow->getBase());
      bool load = !record.empty() && loads_directly(lvalue, arrow, arrow_base, context_);
      wrap_arrow(edits, lvalue, arrow, load ? "__mt_ld(" : "__mt_rd(",
                 load ? ", " + record + ")" : ")");
    } else if (const auto *op = dyn_cast<UnaryOperator>(lvalue)) {
      // *p => __mt_deref(p)
      edits.replace_token(op->getOperatorLoc(), 1, "__mt_deref(");
      edits.close_after(lvalue, ")");
    } else if (const auto *sub = dyn_cast<ArraySubscriptExpr>(lvalue);
               sub && sub->getBase() == sub->getLHS() && !subscripted_array(sub)) {
      // p[i] => __mt_idx(p, i)
      edits.open_before(sub->getBase(), "__mt_idx(");
      edits.replace_token(token_after(sub->getBase(), tok::l_square), 1, ", ");
      edits.replace_token(sub->getRBracketLoc(), 1, ")");
    } else {
      // (*p).x, p[1].x, p[1][2]: read the whole lvalue by its address.
      edits.open_before(lvalue, "__mt_deref(&");
      edits.close_after(lvalue, ")");
    }
    edits.apply(rewriter_);
  }

  // In a typed program: p->path => __mt_walk(p, path, struct T) for a
  // pointer in a kernel struct (mt_helpers.h).
  void walk_untrusted(const Expr *lvalue) {
    const MemberExpr *arrow = arrow_root(lvalue);
    if (!arrow || !lvalue->getType()->isPointerType() || is_bit_field(lvalue))
      return;
    std::string record = kernel_record_of(arrow->getBase());
    if (record.empty() || !at_constant_offset(lvalue, arrow, context_))
      return;
    ReadEdits edits = edits_of(lvalue);
    wrap_arrow(edits, lvalue, arrow, "__mt_walk(", ", " + record + ")");
    edits.apply(rewriter_);
  }

  ReadEdits edits_of(const Expr *lvalue) const {
    ReadEdits edits(sm_, lang_, sm_.getMainFileID());
    // The read's last token is the user's, not a macro's.
    if (!lvalue->getEndLoc().isFileID())
      edits.fail();
    return edits;
  }

  // p->path => OPENp, pathCLOSE
  void wrap_arrow(ReadEdits &edits, const Expr *lvalue, const MemberExpr *arrow,
                  const std::string &open, const std::string &close) const {
    edits.open_before(arrow->getBase(), open);
    SourceLocation op_loc = arrow->getOperatorLoc();
    if (op_loc.isInvalid())
      op_loc = token_after(arrow->getBase(), tok::arrow);
    edits.replace_token(op_loc, 2, ", ");
    edits.close_after(lvalue, close);
  }

  // The `->` or `[` after an operand, found by lexing: the AST has no `[`
  // location, nor a `->` location for members of anonymous structs.
  SourceLocation token_after(const Expr *operand, tok::TokenKind kind) const {
    SourceLocation end = sm_.getExpansionRange(operand->getEndLoc()).getEnd();
    std::optional<Token> token = Lexer::findNextToken(end, sm_, lang_);
    return token && token->is(kind) ? token->getLocation() : SourceLocation();
  }

  ASTContext &context_;
  const SourceManager &sm_;
  const LangOptions &lang_;
  Rewriter &rewriter_;
};

}  // namespace

std::string rewrite_pointer_reads(clang::ASTContext &context,
                                  const std::set<std::string> &functions,
                                  const std::set<std::string> &typed_functions) {
  clang::Rewriter rewriter(context.getSourceManager(), context.getLangOpts());
  Visitor visitor(context, rewriter);
  for (clang::Decl *decl : context.getTranslationUnitDecl()->decls()) {
    const auto *function = llvm::dyn_cast<clang::FunctionDecl>(decl);
    if (!function || !function->doesThisDeclarationHaveABody())
      continue;
    std::string name = function->getNameAsString();
    if (functions.count(name) || typed_functions.count(name)) {
      visitor.set_typed(typed_functions.count(name) != 0);
      visitor.TraverseStmt(function->getBody());
    }
  }
  const clang::RewriteBuffer *buffer =
      rewriter.getRewriteBufferFor(context.getSourceManager().getMainFileID());
  return buffer ? std::string(buffer->begin(), buffer->end()) : std::string();
}

}  // namespace mt
