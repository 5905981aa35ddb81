// Names the frames of a call stack recorded in the arm64 guest (scripts/arm64/check_data.cpp):
// a frame is (file, file offset of a return address); the file is the host's copy of the
// guest's file (the initramfs tree), its functions read from its own symbol table
// (.symtab, else .dynsym) with libelf, its file offsets turned into addresses by its
// PT_LOAD headers. Independent of uprof's resolver on purpose: the check does not trust
// the code it checks to name what it recorded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

class ElfFunctions {
 public:
  // The function holding the call whose return address is `offset` bytes into `path`
  // (the call is the instruction before it): "?" when no symbol covers it, "" (with
  // `error` said) when the file cannot be read.
  std::string at_return_address(const std::string& path, uint64_t offset);
  const std::string& error() const { return error_; }

 private:
  struct Load {
    uint64_t offset, vaddr, filesz;
  };
  struct Function {
    uint64_t start, size;
    std::string name;
  };
  struct File {
    bool ok = false;
    std::vector<Load> loads;
    std::vector<Function> functions;  // by start
  };
  File read(const std::string& path);
  std::map<std::string, File> files_;
  std::string error_;
};
