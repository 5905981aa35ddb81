// The read-side loop: one filter for report and script, what a sink hears and in
// which order, names across fork and exec, and a data file cut short.
#include "uprof/analyse/event_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "analyse/event_builders.h"
#include "uprof/analyse/aggregate.h"

namespace uprof {
namespace {

using test::comm_event;
using test::exit_event;
using test::fork_event;
using test::probe;
using test::sample;

// f (#0, #1) and g (#2, #3) pair; main (#4) is entry only.
constexpr uint32_t kFe = 0, kFr = 1, kGe = 2, kGr = 3, kMain = 4;
constexpr uint32_t kF = 0, kG = 1;
constexpr uint64_t kStart = 1'000'000;
uint64_t t(uint64_t ns) { return kStart + ns; }

std::vector<ProbeInfo> probe_table() {
  return {probe(kFe, ProbeKind::Entry, "f", 0x1000, {"len"}), probe(kFr, ProbeKind::Return, "f", 0x1000),
          probe(kGe, ProbeKind::Entry, "g", 0x2000), probe(kGr, ProbeKind::Return, "g", 0x2000),
          probe(kMain, ProbeKind::Entry, "main", 0x3000)};
}

// Every callback as a line: "call f 1/3 @10 server", "paired", ...
class LogSink final : public EventSink {
 public:
  void on_call(const Call& c, std::string_view comm) override {
    add("call", c.function, c.pid, c.tid, c.entry_time, comm);
  }
  void on_unmatched(const Unmatched& u, std::string_view comm) override {
    add("unmatched " + std::string(to_string(u.reason)), u.function, u.pid, u.tid, u.time, comm);
  }
  void on_hit(const Hit& h, std::string_view comm) override { add("hit", h.function, h.pid, h.tid, h.time, comm); }
  void on_sample(const Event& e, uint32_t function, std::optional<uint64_t> d, std::string_view comm) override {
    add(d ? "sample+" + std::to_string(*d) : "sample", function, e.pid, e.tid, e.time, comm);
  }
  void on_lost(const Event& e) override { log.push_back("lost " + std::to_string(e.lost)); }
  void on_thread(uint32_t pid, uint32_t tid, std::string_view comm) override {
    log.push_back("thread " + std::to_string(pid) + "/" + std::to_string(tid) + " " + std::string(comm));
  }
  void on_paired() override { log.push_back("paired"); }

  // The lines that start with `kind`.
  std::vector<std::string> only(const std::string& kind) const {
    std::vector<std::string> out;
    for (const auto& l : log)
      if (l.rfind(kind, 0) == 0) out.push_back(l);
    return out;
  }
  std::vector<std::string> log;

 private:
  void add(const std::string& what, uint32_t fn, uint32_t pid, uint32_t tid, uint64_t time, std::string_view comm) {
    static const char* const kNames[] = {"f", "g", "main"};
    log.push_back(what + " " + kNames[fn] + " " + std::to_string(pid) + "/" + std::to_string(tid) + " @" +
                  std::to_string(time - kStart) + " " + std::string(comm));
  }
};

struct LoopRun {
  LogSink sink;
  uint64_t filtered_out = 0;
  PairingCounts pairing;
};

LoopRun run(const std::vector<Event>& events, const AggregateFilter& filter = {}) {
  const ProbeFunctions fns = group_probes(probe_table());
  LoopRun r;
  EventLoop loop(fns, filter, kStart, r.sink);
  for (const Event& e : events) loop.add(e);
  loop.finish();
  r.filtered_out = loop.filtered_out();
  r.pairing = loop.pairing();
  return r;
}

TEST(EventLoop, OneEventsCallbacksInOrder) {
  LoopRun r = run({comm_event(1, 1, "app", t(0)), sample(kGe, 1, t(10)), sample(kFe, 1, t(20), {4}),
               sample(kGr, 1, t(30)), test::lost(t(40), 2)});
  const std::vector<std::string> expected{
      "thread 1/1 app", "paired",                       // the Comm event
      "thread 1/1 app", "paired", "sample g 1/1 @10 app",
      "thread 1/1 app", "paired", "sample f 1/1 @20 app",
      // g's return: its thread, the inner f it unwound, then g, then the sample itself.
      "thread 1/1 app", "unmatched unwound f 1/1 @20 app", "call g 1/1 @10 app", "paired",
      "sample+20 g 1/1 @30 app",
      "paired", "lost 2",
      "paired",                                         // finish
  };
  EXPECT_EQ(r.sink.log, expected);
}

// The filter the old report and script shared in spirit, now in one place: a call is
// judged by its entry, everything else by when its probe fired.
TEST(EventLoop, FiltersByPidTidCommFunctionAndWindow) {
  const std::vector<Event> events{
      comm_event(1, 1, "server", t(0)), comm_event(2, 2, "client", t(0)),
      fork_event(1, 3, 1, 1, t(1)),  // thread 3 of pid 1 is "server" too
      sample(kFe, 1, t(10), {1}), sample(kFr, 1, t(20)),
      sample(kFe, 2, t(10), {2}), sample(kFr, 2, t(30)),
      sample(kFe, 3, t(10), {3}, 1), sample(kFr, 3, t(40), {}, 1),
      sample(kGe, 1, t(90)), sample(kGr, 1, t(150)),    // entered before 100, returns after
      sample(kGe, 1, t(100)), sample(kGr, 1, t(120)),   // entered at 100
      sample(kGe, 1, t(200)), sample(kGr, 1, t(210)),   // entered at until: out
      sample(kMain, 2, t(220)),
  };
  EXPECT_EQ(run(events, {.pids = {1}}).sink.only("call f").size(), 2u);
  EXPECT_EQ(run(events, {.tids = {2, 3}}).sink.only("call f").size(), 2u);
  const LoopRun by_comm = run(events, {.comms = {"serv*"}});
  EXPECT_EQ(by_comm.sink.only("call f"),
            (std::vector<std::string>{"call f 1/1 @10 server", "call f 1/3 @10 server"}));
  EXPECT_TRUE(by_comm.sink.only("hit").empty());
  EXPECT_EQ(by_comm.filtered_out, 2u);  // client's call and hit
  EXPECT_TRUE(run(events, {.comms = {"nobody"}}).sink.only("call").empty());

  const LoopRun only_g = run(events, {.functions = {"g"}});
  EXPECT_EQ(only_g.sink.only("call").size(), 3u);
  EXPECT_EQ(only_g.sink.only("call f").size(), 0u);
  EXPECT_EQ(only_g.sink.only("sample f").size(), 0u);
  EXPECT_EQ(only_g.filtered_out, 0u);  // not selected is not "filtered": it is not shown at all

  const LoopRun window = run(events, {.since = 100, .until = 200});
  EXPECT_EQ(window.sink.only("call"), (std::vector<std::string>{"call g 1/1 @100 server"}));
  EXPECT_EQ(window.filtered_out, 6u);  // 3 f, 2 g, main
  // A sample is judged by its own time: the straddling call's return is in, its entry out.
  EXPECT_EQ(window.sink.only("sample+60"), (std::vector<std::string>{"sample+60 g 1/1 @150 server"}));
  // The pairer saw everything: nothing came out unmatched for want of an entry.
  EXPECT_EQ(window.pairing.calls, 6u);
  EXPECT_EQ(window.pairing.unmatched_of(UnmatchedReason::ReturnWithoutEntry), 0u);
}

TEST(EventLoop, AForkedChildHasItsParentsNameUntilItExecs) {
  const std::vector<Event> events{
      comm_event(10, 10, "server", t(0)),
      sample(kFe, 10, t(10), {1}),
      fork_event(20, 20, 10, 10, t(11)),                // inherits the open f
      sample(kFr, 20, t(12)), sample(kFr, 10, t(13)),
      comm_event(20, 20, "worker", t(14)),              // exec
      sample(kFe, 20, t(15), {2}), sample(kFr, 20, t(16)),
      comm_event(30, 30, "old", t(17)), exit_event(30, t(18)),
      fork_event(30, 30, 10, 10, t(19)),                // pid 30 reused by a child of server
      sample(kFe, 30, t(20), {3}), sample(kFr, 30, t(21)),
      sample(kFe, 40, t(22), {4}), sample(kFr, 40, t(23)),  // no event named pid 40
  };
  EXPECT_EQ(run(events, {.comms = {"server"}}).sink.only("call"),
            (std::vector<std::string>{"call f 20/20 @10 server", "call f 10/10 @10 server",
                                      "call f 30/30 @20 server"}));
  EXPECT_EQ(run(events, {.comms = {"worker"}}).sink.only("call"),
            (std::vector<std::string>{"call f 20/20 @15 worker"}));
  EXPECT_TRUE(run(events, {.comms = {"old"}}).sink.only("call").empty());
  // An unnamed thread's name is "": '*' keeps it, a glob that needs a letter does not.
  EXPECT_EQ(run(events, {.comms = {"*"}}).sink.only("call").size(), 5u);
  EXPECT_EQ(run(events, {.comms = {"?*"}}).sink.only("call").size(), 4u);
}

TEST(EventLoop, ATidReusedByAForkClosesTheOldOwnersCallsUnderItsName) {
  const LoopRun r = run({comm_event(5, 5, "old", t(0)), comm_event(1, 1, "init", t(0)), sample(kFe, 5, t(10), {1}),
                     fork_event(6, 5, 1, 1, t(20)),  // tid 5 now a child of init; pid 5's exit was lost
                     sample(kFe, 5, t(30), {2}, 6), sample(kFr, 5, t(40), {}, 6)},
                    {.comms = {"old"}});
  EXPECT_EQ(r.sink.only("unmatched"), (std::vector<std::string>{"unmatched thread exited f 5/5 @10 old"}));
  EXPECT_TRUE(r.sink.only("call").empty());
}

TEST(EventLoop, ReportThroughTheLoopCountsWhatTheFilterLeftOut) {
  const ProbeFunctions fns = group_probes(probe_table());
  AggregateOptions opts{.filter = {.comms = {"a*"}}, .start_time = kStart};
  Aggregator agg(fns, opts);
  EventLoop loop(fns, opts.filter, kStart, agg);
  for (const Event& e : {comm_event(1, 1, "app", t(0)), comm_event(2, 2, "bin", t(0)), sample(kFe, 1, t(1), {1}),
                         sample(kFr, 1, t(2)), sample(kFe, 2, t(3), {1}), sample(kFr, 2, t(4))})
    loop.add(e);
  loop.finish();
  EXPECT_EQ(agg.groups()[kF].calls, 1u);
  EXPECT_EQ(agg.groups()[kG].calls, 0u);
  EXPECT_EQ(loop.filtered_out(), 1u);
}

// A file cut inside its second block: the first block's events are read, the open
// calls are reported as the recording stopping, and the reader says where it was cut.
TEST(EventLoop, AFileCutShortStillReadsItsWholeBlocks) {
  RecordingMeta meta;
  meta.start_monotonic_ns = kStart;
  const std::vector<ProbeInfo> probes = probe_table();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("uprof_test_cut_" + std::to_string(getpid()))).string();
  uintmax_t first_block_end = 0;
  {
    auto w = DataFileWriter::create(path, meta, probes);
    ASSERT_TRUE(w.ok()) << w.error().message;
    for (uint64_t i = 0; i < 10; ++i) {
      ASSERT_TRUE(w->add(sample(kFe, 1, t(i * 10), {i})).ok());
      ASSERT_TRUE(w->add(sample(kFr, 1, t(i * 10 + 5))).ok());
    }
    ASSERT_TRUE(w->add(sample(kFe, 1, t(100), {10})).ok());
    ASSERT_TRUE(w->flush().ok());  // the first block ends with f open
    first_block_end = std::filesystem::file_size(path);
    for (uint64_t i = 11; i < 20; ++i) ASSERT_TRUE(w->add(sample(kMain, 1, t(i * 10))).ok());
    ASSERT_TRUE(w->finish(Trailer{}).ok());
  }
  std::filesystem::resize_file(path, first_block_end + 12);  // into the second block
  auto reader = DataFileReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  const ProbeFunctions fns = group_probes(reader->probes());
  LogSink sink;
  EventLoop loop(fns, {}, reader->meta().start_monotonic_ns, sink);
  const ReadCounts n = read_events(*reader, loop);
  std::filesystem::remove(path);
  EXPECT_EQ(n.events, 21u);
  EXPECT_EQ(n.samples, 21u);
  EXPECT_EQ(n.first_time, t(0));
  EXPECT_EQ(n.last_time, t(100));
  EXPECT_EQ(sink.only("call").size(), 10u);
  EXPECT_EQ(sink.only("unmatched"), (std::vector<std::string>{"unmatched recording stopped f 1/1 @100 "}));
  ASSERT_EQ(reader->problems().size(), 1u);
  EXPECT_NE(reader->problems()[0].find("cut short"), std::string::npos) << reader->problems()[0];
}

}  // namespace
}  // namespace uprof
