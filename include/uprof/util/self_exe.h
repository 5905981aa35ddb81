// uprof's own program file. Usually /proc/self/exe; when `record` runs itself again
// through the dynamic loader on private copies of its libraries
// (record/private_libraries.h), /proc/self/exe is the loader, and the first uprof
// passes its program's path in $UPROF_EXE, which main() takes (and removes from the
// environment, so that the workload never sees it).
#pragma once

#include <string>

namespace uprof {

inline constexpr const char* kSelfExeEnv = "UPROF_EXE";

// Takes $UPROF_EXE into the process and removes it from the environment (main, once).
void adopt_self_exe_from_env();
// The path of uprof's program.
std::string self_exe();

}  // namespace uprof
