// Stack frames (record -g: a file and an offset in it, model/recording.h) -> the names a
// person reads, through the resolver's images (resolve/image.h: the file's symbols, or
// its separate debug file's) and, where the file has DWARF, libdw's scopes at the address,
// which name the functions inlined there:
//
//   frame {object 1 = ./why_slow, offset 0x1234}      a return address: the call is before it
//     -> vaddr 0x1234 (PT_LOAD), looked up at 0x1233 (the call instruction, not what follows
//        it, which may be the next function or the next inlined copy's code)
//     -> DWARF scopes at 0x1233, innermost first:
//          DW_TAG_inlined_subroutine "helper"   (abstract origin)  -> "helper"
//          DW_TAG_subprogram "spinner"                             -> "spinner"
//     -> names {"helper", "spinner"}: spinner called work from the copy of helper inlined in it
//
// A C++ or Rust function is named by its linkage name, demangled as the function table
// does ("ns::Klass::run(int)", "m::inner::helper"), else by DW_AT_name; the outermost by
// the symbol table when DWARF does not cover the address. A frame nothing names is
// "FILE+0xOFFSET" (perf's habit), "[unknown]" with the address when no file backs it
// (JIT code). A file whose build-id is not the recording's is never read for names: its
// frames stay "FILE+0xOFFSET", and problems() says why.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/model/recording.h"
#include "uprof/resolve/find/debug_file.h"
#include "uprof/resolve/image.h"

namespace uprof {

struct FrameName {
  // The functions at the frame, innermost first: the inlined copies, then the function
  // their code is in. Never empty.
  std::vector<std::string> functions;
  bool named = false;  // false: "FILE+0xOFF" or "[unknown] 0x..."
  // The function the call is in: the innermost.
  const std::string& caller() const { return functions.front(); }
};

class FrameSymbolizer {
 public:
  explicit FrameSymbolizer(DebugSearch search = {});
  ~FrameSymbolizer();
  FrameSymbolizer(const FrameSymbolizer&) = delete;
  FrameSymbolizer& operator=(const FrameSymbolizer&) = delete;

  // An Object event: frames of `object` are `path`'s offsets (its build-id "" when unknown).
  void add_object(uint32_t object, std::string path, std::string build_id);
  // The names of a frame (cached: each distinct frame is looked up once).
  const FrameName& name(const StackFrame& frame);
  // Files that could not be read for names, once each:
  //   "./app: build-id 3f2a... is not the recording's (5b01...): its frames are left unnamed"
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  struct Object;
  Object* object(uint32_t number);
  FrameName lookup(const StackFrame& frame);

  DebugSearch search_;
  std::map<uint32_t, std::unique_ptr<Object>> objects_;
  std::map<std::pair<uint32_t, uint64_t>, FrameName> cache_;
  std::vector<std::string> problems_;
};

// "libc.so.6" from "/usr/lib/x86_64-linux-gnu/libc.so.6".
std::string_view file_name_of(std::string_view path);

}  // namespace uprof
