// Names the functions at addresses of an ELF file with LLVM's symbolizer:
// DWARF where the file has it (inlined calls included), else its symbols.
// The file is read from the descriptor given (once; kept in memory for the
// process), never looked up by a path (no debug links followed).
#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include <map>
#include <memory>

#include "compiler/compiler_library.h"

namespace mt {

namespace {

struct Binary {
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  std::unique_ptr<llvm::object::ObjectFile> object;
};

}  // namespace

std::vector<std::vector<std::string>> symbolize_with_llvm(
    int fd, const std::string &key, const std::vector<uint64_t> &addresses) noexcept {
  std::vector<std::vector<std::string>> out(addresses.size());
  try {
    // Kept for the process: LLVM keeps what it parsed of each binary.
    static llvm::symbolize::LLVMSymbolizer symbolizer([] {
      llvm::symbolize::LLVMSymbolizer::Options options;
      options.Demangle = true;
      options.UseSymbolTable = true;
      return options;
    }());
    static std::map<std::string, Binary> binaries;
    auto [it, fresh] = binaries.try_emplace(key);
    Binary &binary = it->second;
    if (fresh && fd < 0) {
      binaries.erase(it);  // not given it yet
      return out;
    }
    if (fresh) {
      // Named where no file can be: LLVM looks for split DWARF (.dwp)
      // beside the name it is given.
      auto bytes = llvm::MemoryBuffer::getOpenFile(fd, "/dev/null/" + key, -1);
      if (!bytes)
        return out;
      auto object = llvm::object::ObjectFile::createObjectFile((*bytes)->getMemBufferRef());
      if (!object) {
        llvm::consumeError(object.takeError());
        return out;
      }
      binary = {std::move(*bytes), std::move(*object)};
    }
    if (!binary.object)
      return out;
    for (size_t i = 0; i < addresses.size(); i++) {
      auto frames = symbolizer.symbolizeInlinedCode(
          *binary.object, {addresses[i], llvm::object::SectionedAddress::UndefSection});
      if (!frames) {
        llvm::consumeError(frames.takeError());
        continue;
      }
      uint32_t n = frames->getNumberOfFrames();
      for (uint32_t f = 0; f < n; f++) {
        const llvm::DILineInfo &info = frames->getFrame(f);
        if (info.FunctionName == llvm::DILineInfo::BadString)
          continue;
        std::string name = info.FunctionName;
        // The offset in the function that holds the address, as bpftrace
        // prints it; an inlined call's frames are named only.
        if (f + 1 == n && info.StartAddress && *info.StartAddress <= addresses[i])
          name += "+" + std::to_string(addresses[i] - *info.StartAddress);
        out[i].push_back(std::move(name));
      }
    }
  } catch (...) {
  }
  return out;
}

}  // namespace mt
