// Library specs where no program says which library is meant, live on both engines:
// a workload that is a script (as a pyenv shim is) and a process (-p) that dlopen'ed
// the library. The oracle is the count of calls the workload makes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class LibrarySpecs : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, LibrarySpecs, ::testing::Values("bpf", "perf"), test::engine_name);

int entries_of(const test::LoadedRecording& rec, const std::string& function) {
  int n = 0;
  for (const Event& s : rec.samples)
    n += rec.probes[s.probe].kind == ProbeKind::Entry && rec.probes[s.probe].function == function;
  return n;
}

// A shell script that execs python3, as pyenv's shims do: libz:crc32 is found through
// ld.so.cache, and python's 100 zlib.crc32 calls are libz's 100 crc32 calls.
TEST_P(LibrarySpecs, AScriptWorkloadStillTakesLibrarySpecs) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string shim = dir.file("python3");
  std::ofstream(shim) << "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n";
  std::filesystem::permissions(shim, std::filesystem::perms::owner_all);
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("z.data"), "-e", "libz:crc32", "--",
                shim, "-c", "import zlib\nfor i in range(100): zlib.crc32(bytes([i]))\nprint('done')"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  auto rec = test::load_recording(dir.file("z.data"));
  EXPECT_EQ(entries_of(rec, "crc32"), 100);
  // A function of the script itself cannot be named: the message says why.
  auto f = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("f.data"), "-e", "main", "--", shim,
                "-c", "pass"});
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_EQ(f.err, "uprof: spec: " + shim + " is a script (#!/bin/sh), not an ELF file: name the program it runs as "
                   "BIN:FUNC, or probe a library as LIB:FUNC\n");
}

// -p of a process that loaded libfx with dlopen (no DT_NEEDED names it): its maps do.
TEST_P(LibrarySpecs, RunningProcessLibraryFromItsMaps) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string lib = fixture("x86_64", "libfx.so.1"), pidfile = dir.file("pid"), script = dir.file("loop.py");
  std::ofstream(script) << "import ctypes, os, time\n"
                           "fx = ctypes.CDLL('" << lib << "')\n"
                           "open('" << pidfile << ".tmp', 'w').write(str(os.getpid()))\n"
                           "os.rename('" << pidfile << ".tmp', '" << pidfile << "')\n"
                           "for i in range(1500):\n    fx.fx_lib_add(i, 1)\n    time.sleep(0.001)\n";
  std::thread workload([&] { run({"/usr/bin/python3", script}); });
  ASSERT_TRUE(test::wait_for_file(pidfile, 10));
  std::string pid;
  std::ifstream(pidfile) >> pid;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-p", pid, "--duration", "0.5", "-o",
                dir.file("p.data"), "-e", "libfx:fx_lib_add"});
  workload.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = test::load_recording(dir.file("p.data"));
  ASSERT_FALSE(rec.probes.empty());
  EXPECT_TRUE(std::filesystem::equivalent(rec.probes[0].path, lib)) << rec.probes[0].path;
  EXPECT_GT(entries_of(rec, "fx_lib_add"), 50);  // about 1 a ms for 0.5 s
}

}  // namespace
}  // namespace uprof
