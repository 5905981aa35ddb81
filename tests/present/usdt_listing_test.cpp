#include "uprof/present/usdt_listing.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

UsdtProbe probe(std::string provider, std::string name, uint64_t off, uint64_t vaddr, std::optional<uint64_t> sem,
                std::string args) {
  UsdtProbe p;
  p.note.provider = std::move(provider);
  p.note.name = std::move(name);
  p.note.args = std::move(args);
  p.file_offset = off;
  p.vaddr = vaddr;
  p.semaphore_offset = sem;
  return p;
}

TEST(UsdtListing, OneAlignedLinePerProbe) {
  std::vector<UsdtProbe> probes{
      probe("python", "line", 0x3423c, 0x43423c, 0x68326c, "8@%r14 8@%rax -4@%ebp"),
      probe("libstdcxx", "throw", 0xa90a1, 0xa90a1, std::nullopt, "8@%rdi 8@%rsi"),
      probe("uprof_fx", "plain", 0x11d0, 0x11d0, std::nullopt, ""),
  };
  EXPECT_EQ(render_usdt_list("./prog", probes),
            "PROVIDER   NAME    OFFSET   ADDRESS  SEMAPHORE  ARGS\n"
            "python     line   0x3423c  0x43423c   0x68326c  8@%r14 8@%rax -4@%ebp\n"
            "libstdcxx  throw  0xa90a1   0xa90a1          -  8@%rdi 8@%rsi\n"
            "uprof_fx   plain   0x11d0    0x11d0          -\n");
}

TEST(UsdtListing, AFileWithoutProbesSaysSoInOneLine) {
  EXPECT_EQ(render_usdt_list("./prog", {}), "./prog: no USDT probes (no .note.stapsdt notes)\n");
}

}  // namespace
}  // namespace uprof
