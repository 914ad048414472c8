// Compiles BPF C in-process with Clang on a large-stack thread, gating #line file names.
#include "compiler/clang_compiler.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/SourceManager.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <pthread.h>

#include <exception>
#include <mutex>

#include "codegen/c_generator.h"
#include "common/embedded_files.h"
#include "common/error.h"
#include "compiler/compiler_library.h"
#include "compiler/deref_rewriter.h"

extern "C" {
void LLVMInitializeBPFTargetInfo();
void LLVMInitializeBPFTarget();
void LLVMInitializeBPFTargetMC();
void LLVMInitializeBPFAsmPrinter();
void LLVMInitializeBPFAsmParser();
}

namespace mt {

namespace {

constexpr const char *kMainFile = "/moontrace/program.c";
constexpr const char *kIncludeDir = "/moontrace/include";

class CollectingDiagnostics : public clang::DiagnosticConsumer {
 public:
  explicit CollectingDiagnostics(std::vector<CompileDiagnostic> &out) : out_(out) {}
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Warning)
      return;
    CompileDiagnostic d;
    d.is_error = level >= clang::DiagnosticsEngine::Error;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    d.message = text.str().str();
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      clang::PresumedLoc loc = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (loc.isValid()) {
        d.file = loc.getFilename();
        d.line = static_cast<int>(loc.getLine());
        d.column = static_cast<int>(loc.getColumn());
      }
    }
    out_.push_back(std::move(d));
  }

 private:
  std::vector<CompileDiagnostic> &out_;
};

// Refuses `#line` (and `# N "file"` markers) naming a file other than the
// script's own and the generated code's: LLVM's BTF writer opens the file a
// line is attributed to, from the real file system, to record its text.
class LineNameGate : public clang::PPCallbacks {
 public:
  LineNameGate(clang::Preprocessor &pp, const std::set<std::string> &allowed)
      : pp_(pp), allowed_(allowed) {}

  void FileChanged(clang::SourceLocation loc, FileChangeReason reason,
                   clang::SrcMgr::CharacteristicKind, clang::FileID) override {
    clang::SourceManager &sm = pp_.getSourceManager();
    clang::PresumedLoc now = sm.getPresumedLoc(loc);
    if (loc.isInvalid() || !loc.isFileID() || !now.isValid())
      return;
    std::string name = now.getFilename();
    clang::FileID file = sm.getFileID(loc);
    if (name == kMainFile || name == kGeneratedFileName || allowed_.count(name))
      return;  // the program, or a name the engine gave
    if (file == pp_.getPredefinesFileID() && (name == "<built-in>" || name == "<command line>"))
      return;  // Clang's own predefined macros
    if (reason == EnterFile || reason == ExitFile) {
      clang::OptionalFileEntryRef entry = sm.getFileEntryRefForID(sm.getFileID(loc));
      if (entry && entry->getName() == name)
        return;  // an engine header, from the in-memory file system
    }
    // Report it where the directive stands, before it renames the file.
    llvm::StringRef text = sm.getBufferData(file);
    unsigned offset = sm.getFileOffset(loc);
    unsigned start = offset > 0 ? offset - 1 : 0;
    while (start > 0 && text[start - 1] != '\n')
      start--;
    clang::DiagnosticsEngine &diags = pp_.getDiagnostics();
    unsigned id = diags.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                        "#line may not name the file '%0'; a script's C "
                                        "cannot refer to other files");
    diags.Report(sm.getComposedLoc(file, start), id) << name;
  }

 private:
  clang::Preprocessor &pp_;
  const std::set<std::string> &allowed_;
};

void install_line_gate(clang::CompilerInstance &ci, const std::set<std::string> &allowed) {
  if (!allowed.empty())
    ci.getPreprocessor().addPPCallbacks(
        std::make_unique<LineNameGate>(ci.getPreprocessor(), allowed));
}

// Compiles to an object, with the #line gate.
class GatedEmitAction : public clang::EmitObjAction {
 public:
  explicit GatedEmitAction(const std::set<std::string> &line_files) : line_files_(line_files) {}

 protected:
  bool BeginSourceFileAction(clang::CompilerInstance &ci) override {
    if (!clang::EmitObjAction::BeginSourceFileAction(ci))
      return false;
    install_line_gate(ci, line_files_);
    return true;
  }

 private:
  const std::set<std::string> &line_files_;
};

// Parses the program and hands the AST to the pointer-read rewriter.
class RewriteAction : public clang::ASTFrontendAction {
 public:
  RewriteAction(const std::set<std::string> &functions, const std::set<std::string> &typed,
                std::string &out, const std::set<std::string> &line_files)
      : functions_(functions), typed_(typed), out_(out), line_files_(line_files) {}

 protected:
  bool BeginSourceFileAction(clang::CompilerInstance &ci) override {
    install_line_gate(ci, line_files_);
    return true;
  }

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &,
                                                        llvm::StringRef) override {
    struct Consumer : clang::ASTConsumer {
      Consumer(const std::set<std::string> &f, const std::set<std::string> &t, std::string &o)
          : functions(f), typed(t), out(o) {}
      void HandleTranslationUnit(clang::ASTContext &context) override {
        if (!context.getDiagnostics().hasErrorOccurred())
          out = rewrite_pointer_reads(context, functions, typed);
      }
      const std::set<std::string> &functions, &typed;
      std::string &out;
    };
    return std::make_unique<Consumer>(functions_, typed_, out_);
  }

 private:
  const std::set<std::string> &functions_, &typed_;
  std::string &out_;
  const std::set<std::string> &line_files_;
};

// LLVM reports a program it cannot emit (a jump beyond 16 bits in a huge
// program) as fatal and would abort. The compile runs on its own thread
// and the process ends after the error, so unwinding out of LLVM is safe
// enough: the error becomes one line like any other.
void on_llvm_fatal_error(void *, const char *reason, bool) {
  throw Error(std::string("the BPF back end cannot emit the generated program (LLVM: ") + reason +
              "); make it smaller: fewer probes on one tracepoint, or shorter actions");
}

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(on_llvm_fatal_error, nullptr);
    LLVMInitializeBPFTargetInfo();
    LLVMInitializeBPFTarget();
    LLVMInitializeBPFTargetMC();
    LLVMInitializeBPFAsmPrinter();
    // Inline asm in a script is parsed, not an abort; its calls are then
    // checked like any others.
    LLVMInitializeBPFAsmParser();
  });
}

// Runs one frontend action over `source` with the embedded headers.
bool run_action(const std::string &source, const std::vector<std::string> &defines,
                clang::FrontendAction &action, bool emit_object,
                std::vector<CompileDiagnostic> &diagnostics, llvm::SmallVectorImpl<char> *object) {
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  fs->addFile(kMainFile, 0, llvm::MemoryBuffer::getMemBufferCopy(source, kMainFile));
  for (const auto &header : kBpfHeaders)
    fs->addFile(std::string(kIncludeDir) + "/" + header.name, 0,
                llvm::MemoryBuffer::getMemBuffer(header.content, header.name));

  auto compiler = std::make_unique<clang::CompilerInstance>();
  auto diag_options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  CollectingDiagnostics collector(diagnostics);
  auto diag_ids = llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>();
  clang::DiagnosticsEngine args_diags(diag_ids, diag_options, &collector, false);

  std::vector<const char *> args = {
      "-triple", "bpf", "-target-cpu", "v3", "-O2", "-debug-info-kind=constructor",
      "-dwarf-version=5",
      // LLVM's BTF writer reads each source file for the line
      // text it records, from the real file system; relative
      // names (shipped scripts, modules) resolve here, where
      // nothing is, rather than in the working directory.
      "-fdebug-compilation-dir=/moontrace", "-nostdsysteminc", "-nobuiltininc", "-I", kIncludeDir,
      "-std=gnu11", "-ferror-limit", "10", "-Werror=division-by-zero", "-Wno-unused-value",
      "-Wno-pointer-sign", "-Wno-unused-variable", "-Wno-gnu-variable-sized-type-not-at-end", "-x",
      "c", emit_object ? "-emit-obj" : "-fsyntax-only",
      // Debug variable locations, which BTF does not keep: 5% of the time.
      "-fexperimental-assignment-tracking=disabled",
      // As Clang's driver passes them in its release builds: no check of
      // the IR after each pass, no names kept for its values (5% of a
      // compile; the same code, BTF's forward declarations in another order).
      "-disable-llvm-verifier", "-discard-value-names"};
  for (const auto &d : defines) {
    args.push_back("-D");
    args.push_back(d.c_str());
  }
  args.push_back(kMainFile);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, args, args_diags))
    return false;
  compiler->setInvocation(std::move(invocation));
  compiler->createDiagnostics(&collector, false);
  compiler->setVerboseOutputStream(llvm::nulls());  // no "N errors generated."
  compiler->createFileManager(fs);
  if (object)
    compiler->setOutputStream(std::make_unique<llvm::raw_svector_ostream>(*object));
  bool ok;
  try {
    ok = compiler->ExecuteAction(action);
  } catch (...) {
    // Out of an LLVM fatal error (on_llvm_fatal_error): its objects are
    // half torn and crash if destroyed. The process is ending; leave them.
    compiler.release();
    throw;
  }
  return ok && !compiler->getDiagnostics().hasErrorOccurred();
}

// Clang and LLVM recurse once per level of an expression's tree: a filter
// of thousands of terms overflows an 8 MiB main-thread stack. The compile
// runs on a thread whose stack is reserved large (pages are only touched
// as deep as it goes); the script front end bounds expressions below what
// this survives.
constexpr size_t kCompilerStackBytes = size_t(512) << 20;

template <typename F>
void run_with_large_stack(F &&work) {
  struct Job {
    F *work;
    std::exception_ptr error;
  } job{&work, nullptr};
  auto entry = [](void *arg) -> void * {
    auto *j = static_cast<Job *>(arg);
    try {
      (*j->work)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_t thread;
  bool started = pthread_attr_init(&attr) == 0 &&
                 pthread_attr_setstacksize(&attr, kCompilerStackBytes) == 0 &&
                 pthread_create(&thread, &attr, entry, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    work();  // no thread to be had: the main stack, as before
    return;
  }
  pthread_join(thread, nullptr);
  if (job.error)
    std::rethrow_exception(job.error);
}

CompileResult compile_in_this_thread(const std::string &source, const CompileOptions &options);

}  // namespace

// The library's entry: an error never crosses into the engine as an
// exception (the two have their own copies of its type).
CompileResult compile_with_clang(const std::string &source, const CompileOptions &options) {
  CompileResult result;
  try {
    run_with_large_stack([&] { result = compile_in_this_thread(source, options); });
  } catch (const std::exception &e) {
    result = CompileResult();
    result.failure = e.what();
  }
  return result;
}

namespace {

CompileResult compile_in_this_thread(const std::string &source, const CompileOptions &options) {
  init_llvm();
  CompileResult result;
  result.rewritten_source = source;
  if (!options.rewrite_functions.empty() || !options.typed_read_functions.empty()) {
    std::string rewritten;
    RewriteAction rewrite(options.rewrite_functions, options.typed_read_functions, rewritten,
                          options.line_files);
    if (!run_action(source, options.defines, rewrite, false, result.diagnostics, nullptr))
      return result;
    if (!rewritten.empty())
      result.rewritten_source = rewritten;
    result.diagnostics.clear();  // the compile below reports the same warnings
  }
  llvm::SmallVector<char, 0> object;
  auto emit = std::make_unique<GatedEmitAction>(options.line_files);
  try {
    result.ok = run_action(result.rewritten_source, options.defines, *emit, true,
                           result.diagnostics, &object);
  } catch (...) {
    emit.release();  // as the compiler instance: torn by a fatal error
    throw;
  }
  if (result.ok)
    result.object.assign(object.begin(), object.end());
  return result;
}

}  // namespace
}  // namespace mt

extern "C" __attribute__((visibility("default"))) const mt::CompilerEntry mt_compiler_entry = {
    mt::kCompilerAbi, &mt::compile_with_clang, &mt::symbolize_with_llvm, MT_VERSION,
    MT_COMPILER_SOURCES_DIGEST};
