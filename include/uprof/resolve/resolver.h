// Spec -> resolved probes. Picks the file a spec names (the target program, a
// path, or a library short name found as the loader would), finds the function(s)
// in it, and turns each address into the file offset the kernel takes, refusing
// whatever would corrupt the traced program or never fire.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uprof/resolve/image.h"
#include "uprof/resolve/library_search.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/spec/probe_spec.h"

namespace uprof {

struct ResolveOptions {
  DebugSearch debug;
  LibrarySearchOptions libraries;
};

class Resolver {
 public:
  explicit Resolver(ResolveOptions opts = {}) : opts_(std::move(opts)) {}

  // `target` is the program a spec without OBJECT refers to ("" when there is none).
  Result<std::vector<ResolvedProbe>> resolve(const ProbeSpec& spec, const std::string& target);
  // Loads (once) and returns the image of a file.
  Result<const Image*> image(const std::string& path);
  // The file a spec's OBJECT names, for the given target.
  Result<std::string> object_path(const std::string& object, const std::string& target);

 private:
  ResolveOptions opts_;
  std::map<std::string, std::unique_ptr<Image>> images_;
};

}  // namespace uprof
