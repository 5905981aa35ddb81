#include "uprof/analyse/thread_names.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(ThreadNames, CommForkExecAndExit) {
  ThreadNames n;
  EXPECT_EQ(n.name(10, 10), "");
  EXPECT_EQ(n.name_id(10, 10), ThreadNames::kNoName);
  n.on_comm(10, 10, "server");
  n.on_fork(10, 11, 10, 10);  // a thread
  n.on_fork(20, 20, 10, 11);  // a process forked by that thread
  EXPECT_EQ(n.name(10, 11), "server");
  EXPECT_EQ(n.name(20, 20), "server");
  EXPECT_EQ(n.name_id(20, 20), n.name_id(10, 10));  // one interned name
  EXPECT_EQ(n.distinct_names(), 1u);
  n.on_comm(20, 20, "worker");  // the child execs: the parent keeps its name
  EXPECT_EQ(n.name(20, 20), "worker");
  EXPECT_EQ(n.name(10, 10), "server");
  n.on_exit(10, 11);
  EXPECT_EQ(n.name(10, 11), "server");  // forgotten: now its process's name
  n.on_exit(10, 10);
  EXPECT_EQ(n.name(10, 11), "");
}

TEST(ThreadNames, AThreadNoEventNamedHasItsProcesssName) {
  ThreadNames n;
  n.on_comm(7, 7, "app");
  EXPECT_EQ(n.name(7, 8), "app");      // existed before record -p attached: no Fork
  n.on_fork(9, 9, 7, 8);               // its child inherits that name too
  EXPECT_EQ(n.name(9, 9), "app");
  EXPECT_EQ(n.name(8, 8), "");         // tid 8 as a process of its own: nobody named it
}

TEST(ThreadNames, AForkRenamesAReusedTid) {
  ThreadNames n;
  n.on_comm(1, 1, "init");
  n.on_comm(30, 30, "old");
  // pid 30 exits unseen (its Exit lost); the kernel gives 30 to a child of pid 1.
  n.on_fork(30, 30, 1, 1);
  EXPECT_EQ(n.name(30, 30), "init");
  // A fork whose parent nobody named leaves the child unnamed, not with the tid's old name.
  n.on_comm(40, 40, "stale");
  n.on_fork(40, 40, 99, 99);
  EXPECT_EQ(n.name(40, 40), "");
  // An exit under another pid is not this thread's.
  n.on_exit(2, 30);
  EXPECT_EQ(n.name(30, 30), "init");
}

}  // namespace
}  // namespace uprof
