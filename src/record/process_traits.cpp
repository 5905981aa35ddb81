#include "uprof/record/process_traits.h"

#include <elf.h>
#include <gelf.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace uprof {
namespace {

// The functions that move a thread to another stack and back (boost.context's are its
// own assembly, not libc's). Not sigaltstack: Python, Rust and Go programs import it for
// a handler of fatal signals, and the kernel copes with a handler's stack below the
// interrupted one (tests/cli/alone_test.cpp); taking it would cost them the latency of
// every function whose exits cannot all be seen (CPython's eval loop, for one).
constexpr std::array<std::string_view, 5> kStackSwitchers{"swapcontext", "setcontext", "makecontext", "jump_fcontext",
                                                          "ontop_fcontext"};

// The personality routines whose language raises exceptions (the unwinder calls them
// through the CIE of each function with a handler or a cleanup; a file that references
// one also has a `DW.ref.` copy of its address). C's __gcc_personality_v0 is not here:
// it runs cleanups, and C raises nothing.
struct Personality {
  std::string_view symbol;
  std::string_view language;
};
constexpr std::array<Personality, 10> kPersonalities{{
    {"__gxx_personality_v0", "C++"},
    {"__gxx_personality_sj0", "C++"},
    {"__gxx_personality_seh0", "C++"},
    {"rust_eh_personality", "Rust"},
    {"__gnat_personality_v0", "Ada"},
    {"__gnat_personality_sj0", "Ada"},
    {"__gdc_personality_v0", "D"},
    {"__objc_personality_v0", "Objective-C"},
    {"__gnu_objc_personality_v0", "Objective-C"},
    {"__gccgo_personality_v0", "Go"},
}};

}  // namespace

std::string personality_language(std::string_view symbol) {
  constexpr std::string_view kRef = "DW.ref.";
  if (symbol.substr(0, kRef.size()) == kRef) symbol.remove_prefix(kRef.size());
  for (const Personality& p : kPersonalities)
    if (symbol == p.symbol) return std::string(p.language);
  return "";
}

std::string go_file(const ElfFile& elf) {
  Elf* e = elf.elf();
  std::size_t shstrndx = 0;
  if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
    for (Elf_Scn* scn = elf_nextscn(e, nullptr); scn; scn = elf_nextscn(e, scn)) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      const char* name = elf_strptr(e, shstrndx, sh.sh_name);
      if (name && std::string_view(name) == ".go.buildinfo") return elf.path() + " has a .go.buildinfo section";
    }
  }
  for (const ElfSymbol& s : elf.symbols())
    if (s.name == "runtime.buildVersion" && s.shndx != SHN_UNDEF) return elf.path() + " defines runtime.buildVersion";
  return "";
}

ProcessTraits file_traits(const std::string& path, const std::vector<ElfSymbol>& symbols, bool is_program) {
  ProcessTraits t;
  for (const ElfSymbol& s : symbols) {
    if (t.cxx_runtime.empty())
      if (std::string language = personality_language(s.name); !language.empty()) {
        std::string_view routine = s.name;
        if (routine.substr(0, 7) == "DW.ref.") routine.remove_prefix(7);
        t.cxx_runtime = path + " names " + std::string(routine);
        t.runtime_language = std::move(language);
      }
    const bool imported = s.shndx == SHN_UNDEF;
    if (t.switches_stacks.empty() && (imported || is_program))
      for (std::string_view name : kStackSwitchers)
        if (s.name == name) t.switches_stacks = path + (imported ? " imports " : " defines ") + s.name;
  }
  return t;
}

Result<ProcessTraits> process_traits(const std::vector<std::string>& files, bool unknown) {
  ProcessTraits out;
  if (unknown) {
    out.cxx_runtime = "with -a any process that maps the probed files may have the C++ runtime";
    out.runtime_language = "C++";
  }
  for (std::size_t i = 0; i < files.size(); i++) {
    if (files[i].empty()) continue;
    if (!out.cxx_runtime.empty() && !out.switches_stacks.empty()) break;
    // The file alone, not its image: an image looks for debug files (debuginfod too), and
    // the symbols that matter here are dynamic ones.
    auto elf = ElfFile::open(files[i]);
    if (!elf) continue;  // unreadable (gone, or not ELF): it tells nothing, and resolving has said so where it matters
    const ProcessTraits t = file_traits(files[i], elf->symbols(), i == 0);
    if (out.cxx_runtime.empty()) {
      out.cxx_runtime = t.cxx_runtime;
      out.runtime_language = t.runtime_language;
    }
    if (out.switches_stacks.empty()) out.switches_stacks = t.switches_stacks;
  }
  return out;
}

Result<ProcessTraits> run_traits(const std::string& program, const std::vector<std::string>& mapped,
                                 const std::vector<ResolvedProbe>& probes, bool unknown,
                                 const LibrarySearchOptions& libraries) {
  std::vector<std::string> files{program};
  if (!mapped.empty()) {
    files.insert(files.end(), mapped.begin(), mapped.end());
  } else if (!program.empty()) {
    if (auto elf = ElfFile::open(program); elf)  // a script: no ELF, its interpreter is not known here
      for (const NeededLibrary& lib : needed_libraries(*elf, libraries))
        if (!lib.path.empty()) files.push_back(lib.path);
  }
  for (const auto& p : probes)
    if (std::find(files.begin(), files.end(), p.path) == files.end()) files.push_back(p.path);
  return process_traits(files, unknown || (program.empty() && mapped.empty()));
}

}  // namespace uprof
