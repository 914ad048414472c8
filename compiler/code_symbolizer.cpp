// Names the functions at addresses of an ELF file with LLVM's symbolizer:
// DWARF where the file has it (inlined calls included), else its symbols.
#include <llvm/DebugInfo/Symbolize/Symbolize.h>

#include "compiler/compiler_library.h"

namespace mt {

std::vector<std::vector<std::string>> symbolize_with_llvm(
    const std::string &path, const std::vector<uint64_t> &addresses) noexcept {
  std::vector<std::vector<std::string>> out(addresses.size());
  try {
    // Kept for the run: LLVM keeps each file it parsed.
    static llvm::symbolize::LLVMSymbolizer symbolizer([] {
      llvm::symbolize::LLVMSymbolizer::Options options;
      options.Demangle = true;
      options.UseSymbolTable = true;
      return options;
    }());
    for (size_t i = 0; i < addresses.size(); i++) {
      auto frames = symbolizer.symbolizeInlinedCode(
          path, {addresses[i], llvm::object::SectionedAddress::UndefSection});
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
