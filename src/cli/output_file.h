// Where a command's output goes: stdout, or the file -o names. The file is opened when
// the command starts, so that a bad path fails at once and not after a pass over a big
// data file, but it is only emptied and written when the output is ready: a run that
// fails leaves a file that was there as it was, and removes one it created.
//   auto out = OutputFile::open(path);   // "uprof: report: /nope/r.html: No such file or directory"
//   ... build the report ...
//   out->write(html);
#pragma once

#include <string>
#include <string_view>

#include "uprof/util/result.h"

namespace uprof::cli {

class OutputFile {
 public:
  // "" or "-": stdout. `command` prefixes the error ("report").
  static Result<OutputFile> open(std::string_view command, const std::string& path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Replaces the file's content with `content` (or prints it), once.
  Status write(std::string_view content);
  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string command, std::string path, int fd, bool created)
      : command_(std::move(command)), path_(std::move(path)), fd_(fd), created_(created) {}

  std::string command_;
  std::string path_;   // "" for stdout
  int fd_ = -1;
  bool created_ = false;
  bool written_ = false;
};

}  // namespace uprof::cli
