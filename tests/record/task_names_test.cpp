#include "uprof/record/task_names.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

namespace uprof {
namespace {

Event event(EventKind kind, uint32_t pid, uint32_t tid) {
  Event e;
  e.kind = kind;
  e.pid = pid;
  e.tid = tid;
  e.time = 1000 + tid;
  return e;
}

TEST(TaskNames, AThreadNoEventNamedIsNamedOnceBeforeItsFirstEvent) {
  std::vector<std::pair<uint32_t, uint32_t>> asked;
  TaskNames names([&](uint32_t pid, uint32_t tid) -> std::optional<std::string> {
    asked.emplace_back(pid, tid);
    return "journal";
  });
  auto c = names.before(event(EventKind::Sample, 40, 41));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, EventKind::Comm);
  EXPECT_EQ(c->pid, 40u);
  EXPECT_EQ(c->tid, 41u);
  EXPECT_EQ(c->time, 1041u);
  EXPECT_EQ(c->comm, "journal");
  EXPECT_FALSE(names.before(event(EventKind::Sample, 40, 41)));
  EXPECT_TRUE(names.before(event(EventKind::Sample, 40, 42)));                   // another thread
  EXPECT_FALSE(names.before(event(EventKind::Sample, 40, 41)));                  // not asked again
  EXPECT_EQ(asked.size(), 2u);
}

TEST(TaskNames, ThreadsNamedByEventsAreNotRead) {
  int reads = 0;
  TaskNames names([&](uint32_t, uint32_t) -> std::optional<std::string> {
    ++reads;
    return "x";
  });
  Event comm = event(EventKind::Comm, 7, 7);
  comm.comm = "prog";
  EXPECT_FALSE(names.before(comm));
  EXPECT_FALSE(names.before(event(EventKind::Sample, 7, 7)));
  EXPECT_FALSE(names.before(event(EventKind::Fork, 7, 8)));
  EXPECT_FALSE(names.before(event(EventKind::Sample, 7, 8)));
  EXPECT_EQ(reads, 0);
  // An exited tid that comes back is another thread: read again.
  EXPECT_FALSE(names.before(event(EventKind::Exit, 7, 8)));
  EXPECT_TRUE(names.before(event(EventKind::Sample, 9, 8)));
  EXPECT_EQ(reads, 1);
}

TEST(TaskNames, AThreadAlreadyGoneKeepsItsPid) {
  TaskNames names([](uint32_t, uint32_t) -> std::optional<std::string> { return std::nullopt; });
  EXPECT_FALSE(names.before(event(EventKind::Sample, 5, 5)));
}

TEST(TaskNames, ProcSaysTheThreadsOwnName) {
  ASSERT_EQ(prctl(PR_SET_NAME, "task-names-t", 0, 0, 0), 0);
  auto name = read_task_comm(static_cast<uint32_t>(getpid()), static_cast<uint32_t>(gettid()));
  ASSERT_TRUE(name);
  EXPECT_EQ(*name, "task-names-t");
  EXPECT_FALSE(read_task_comm(0x7ffffff0u, 0x7ffffff0u));
}

}  // namespace
}  // namespace uprof
