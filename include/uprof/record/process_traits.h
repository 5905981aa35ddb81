// What the processes a recording follows may do that makes a return probe unsafe, read
// from their files before anything runs (record/unwind_risk.h takes the answer):
//
//   an unwinding runtime  a file names a personality routine other than C's:
//                       __gxx_personality_v0 (a C++ program imports it, libstdc++
//                       defines it), rust_eh_personality (every Rust program that
//                       unwinds on panic links it in from std), Ada's, D's,
//                       Objective-C's: an exception or a panic may unwind through any
//                       function that calls out, C code too (a throwing qsort comparator
//                       unwinds through libc's qsort). C's own, __gcc_personality_v0,
//                       only runs cleanups of C code built with -fexceptions: it throws
//                       nothing.
//   stack switching     a file imports swapcontext, setcontext, makecontext or
//                       boost.context's jump_fcontext/ontop_fcontext (or a program
//                       defines one, linked in statically): a return can happen on
//                       another stack than the call, which the kernel's return probes
//                       do not follow (they drop or pop the wrong pending return)
//
// The files are the program and the libraries it needs (a command), the files the
// process maps (-p), and the probed files. With -a the processes are not known: the C++
// runtime is assumed (aborting an unknown process costs more than the latency of the
// C functions whose exits cannot all be seen); stack switching is seen only in the
// probed files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/find/library_search.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/util/result.h"

namespace uprof {

struct ProcessTraits {
  // Why the process may unwind, by C++ exceptions or Rust panics ("./app names
  // __gxx_personality_v0"); "" when none of its files does.
  std::string cxx_runtime{};
  // The language of that runtime, for a person: "C++", "Rust" (personality_language).
  std::string runtime_language{};
  // Why its code may switch stacks ("./app imports swapcontext"); "" when not seen.
  std::string switches_stacks{};
};

// Pure: the language whose exceptions the personality routine `symbol` unwinds ("C++"
// for __gxx_personality_v0 and DW.ref.__gxx_personality_v0, "Rust" for
// rust_eh_personality); "" when `symbol` is none, or C's (__gcc_personality_v0).
std::string personality_language(std::string_view symbol);

// Why `elf` is a Go program or library ("./gw has a .go.buildinfo section", "./gw defines
// runtime.buildVersion"); "" when it is not. Go's linker writes .go.buildinfo into every
// program it links since Go 1.13 (a stripped one too); runtime.buildVersion is the
// runtime's own variable, for files without the section.
std::string go_file(const ElfFile& elf);

// Pure: what one file's symbols say. `is_program`: a symbol it defines counts as used
// (a static program links in only what it calls).
ProcessTraits file_traits(const std::string& path, const std::vector<ElfSymbol>& symbols, bool is_program);

// The traits of the processes that run `files` (the first is the program, "" when there
// is none); `unknown`: -a, processes uprof cannot see.
Result<ProcessTraits> process_traits(const std::vector<std::string>& files, bool unknown);

// The same for the run of `program` ("" with none): the libraries it needs, or, with -p,
// `mapped` (the files the process maps), and the files of `probes`. `record` and `probe`
// ask it the same way; with no program and no process (-a, `uprof probe libc:qsort`) the
// processes are unknown.
Result<ProcessTraits> run_traits(const std::string& program, const std::vector<std::string>& mapped,
                                 const std::vector<ResolvedProbe>& probes, bool unknown,
                                 const LibrarySearchOptions& libraries = {});

}  // namespace uprof
