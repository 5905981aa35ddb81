// uprof keeps out of its own recording. A uprobe belongs to a file (its inode), so a
// probe on libc or libstdc++ puts a breakpoint into every process that maps that file,
// uprof included: with `-e 'libstdc++:*'` each of uprof's own calls into libstdc++ took
// a trap (its BPF program drops uprof's hits, but the trap and the single-step are paid),
// and a 0.1 s program took 10 s to record, most of it uprof's own work slowed down.
//
// When a recording's specs name a library uprof itself maps, `record` copies that file into a
// private directory under its DT_SONAME and runs itself again through the dynamic loader
// with that directory first on the library path:
//   /lib64/ld-linux-x86-64.so.2 --library-path DIR --argv0 uprof /usr/bin/uprof
//       record --private-libs DIR ARGS...
// The copies are other inodes: no breakpoint goes into uprof. The second uprof removes
// DIR as it starts (its mappings keep the copies alive). The workload is exec'd as
// always and maps the real files. Without a copy (no space, no loader) uprof records
// as before, and says why.
#pragma once

#include <string>
#include <vector>

#include "uprof/util/proc_maps.h"
#include "uprof/util/result.h"

namespace uprof {

// The files of `own` (this process's mappings) that the specs' library parts name
// (`objects`: "libc", "libstdc++.so.6", a path), before anything is resolved, so that
// the second uprof is the only one to resolve and plan: a name by its DT_SONAME as
// find_library matches it (library_search.h), a path by device and inode.
std::vector<MapsEntry> own_files_named(const std::vector<std::string>& objects, const std::vector<MapsEntry>& own);

struct PrivateCopy {
  std::string source;  // /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30
  std::string name;    // its DT_SONAME, libstdc++.so.6 (the name the loader looks for)
  bool loader = false; // the dynamic loader itself: exec'd from its copy
};

// The argv that runs uprof again on the copies in `dir` (pure): the loader (`loader`,
// or its copy in dir when it is among `copies`), its options, then `exe` and `args`
// (argv[1..] of the first uprof, "record" first) with --private-libs DIR after "record".
std::vector<std::string> private_libraries_argv(const std::string& loader, const std::string& dir,
                                                const std::vector<PrivateCopy>& copies, const std::string& exe,
                                                const std::vector<std::string>& args);

// Copies `files` into a new directory and execs uprof through the loader; returns only
// when that could not be done (the Error says why). `args` as for the argv above.
Status run_on_private_libraries(const std::vector<MapsEntry>& files, const std::vector<std::string>& args);

}  // namespace uprof
