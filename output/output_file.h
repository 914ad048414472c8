// A file moontrace writes its output to (-o FILE, or the trace a script
// names with fxt{file=}), opened so that running as root is safe and a
// failed run loses nothing:
// - a symbolic link at the path is followed only when root, the user or
//   the sudo user made it, in a directory nobody else can change (so that
//   -o /dev/stdout works); a name a script chose is never followed, and
//   without --unsafe must be a plain name in the working directory;
// - a regular or new file is written to a temporary file (0600, O_EXCL) in
//   the same directory, renamed over the target by commit() once tracing
//   has begun; until then, and if the run fails, the target is untouched,
//   and if writing fails after, the earlier file is put back;
// - a device, FIFO or the pipe behind /dev/stdout is written directly;
// - under sudo, a file in a directory the invoking user owns is given to
//   them, so that they can open it.
#pragma once
#include <cstdio>
#include <string>

#include "common/declaration.h"
#include "common/unique_fd.h"

namespace mt {

class OutputFile {
 public:
  // Where the name came from: -o, or a script's fxt{file=} at `where`.
  enum class Origin { CommandLine, Script };

  // Throws mt::Error (one line; at `where` for a script's name).
  static OutputFile open(const std::string &path, Origin origin = Origin::CommandLine,
                         bool unsafe = false, const ScriptLocation &where = {});
  OutputFile(OutputFile &&) = default;
  OutputFile &operator=(OutputFile &&) = default;
  // Removes the temporary file unless commit() came first, and the link
  // to the earlier file.
  ~OutputFile();

  const std::string &path() const { return path_; }
  int fd() const { return fd_.get(); }
  // A FILE* of its own on the file (a dup of fd()), unbuffered: the
  // writers buffer, and must see every write error where it happens.
  std::FILE *stream() const;
  // Puts the written file in place of the target, the earlier one kept
  // aside (a hidden link beside it) until the end; nothing for a file
  // written directly. Throws mt::Error if the rename fails.
  void commit();
  // Once the file is closed: if writing failed after commit(), the earlier
  // file takes its place back (a full disk costs what was written, not the
  // earlier trace); else its link goes. (Runs that end with _exit do not
  // run destructors.)
  void settle(bool written);
  bool committed() const { return temp_name_.empty(); }
  // Closes the file: 0, or the errno of a write error that only closing
  // reported (as NFS may).
  int close();

 private:
  OutputFile() = default;

  std::string path_;
  UniqueFd fd_, dir_;
  std::string temp_name_, target_name_;  // in dir_; temp_name_ "" once committed
  std::string earlier_name_;             // in dir_: the earlier target's link, if any
};

}  // namespace mt
