// Where a command's output goes: stdout, or the file -o names. The name is checked when
// the command starts, so that a bad path fails at once and not after a pass over a big
// data file, and the output is written to a new private file beside it
// (util/private_file.h: never through a link, 0600, the sudo user's) that is renamed
// onto the name once it is whole: a run that fails leaves what was there as it was.
// A character device (/dev/null, a terminal) is written as it is: only root makes one.
//   auto out = OutputFile::open("report", path);  // "uprof: report: /nope/r.html: the directory /nope does not exist"
//   ... build the report ...
//   out->write(html);
#pragma once

#include <string>
#include <string_view>

#include "uprof/util/private_file.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof::cli {

class OutputFile {
 public:
  // "" or "-": stdout. `command` prefixes the error ("report").
  static Result<OutputFile> open(std::string_view command, const std::string& path);

  OutputFile(OutputFile&& other) noexcept = default;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writes `content` as the file's whole content (or prints it), once.
  Status write(std::string_view content);
  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string command, std::string path) : command_(std::move(command)), path_(std::move(path)) {}

  std::string command_;
  std::string path_;   // "" for stdout
  UniqueFd device_;    // a character device, opened at once
  bool written_ = false;
};

}  // namespace uprof::cli
