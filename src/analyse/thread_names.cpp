#include "uprof/analyse/thread_names.h"

namespace uprof {

namespace {

FlatIndex::Key tid_key(uint32_t tid) { return {.a = tid, .b = 0}; }

}  // namespace

uint32_t ThreadNames::own_name(uint32_t pid, uint32_t tid) const {
  const auto slot = index_.find(tid_key(tid));
  // Another pid: the tid was reused by a task whose creation we did not see.
  return slot && threads_[*slot].pid == pid ? threads_[*slot].name : kNoName;
}

uint32_t ThreadNames::name_id(uint32_t pid, uint32_t tid) const {
  if (last_valid_ && last_tid_ == tid && last_pid_ == pid) return last_id_;
  const uint32_t own = own_name(pid, tid);
  last_id_ = own != kNoName || tid == pid ? own : own_name(pid, pid);
  last_pid_ = pid;
  last_tid_ = tid;
  last_valid_ = true;
  return last_id_;
}

void ThreadNames::set(uint32_t pid, uint32_t tid, uint32_t name) {
  last_valid_ = false;
  const uint32_t slot = free_.empty() ? static_cast<uint32_t>(threads_.size()) : free_.back();
  const auto ins = index_.insert(tid_key(tid), slot);
  if (ins.inserted) {
    if (slot == threads_.size()) threads_.emplace_back();
    else free_.pop_back();
  }
  threads_[ins.position] = Thread{.pid = pid, .name = name};
}

void ThreadNames::forget(uint32_t tid) {
  const auto slot = index_.find(tid_key(tid));
  if (!slot) return;
  last_valid_ = false;
  index_.erase(tid_key(tid));
  threads_[*slot] = Thread{};
  free_.push_back(*slot);
}

void ThreadNames::on_comm(uint32_t pid, uint32_t tid, std::string_view comm) {
  auto [it, inserted] = ids_.try_emplace(std::string(comm), static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(it->first);
  set(pid, tid, it->second);
}

void ThreadNames::on_fork(uint32_t pid, uint32_t tid, uint32_t parent_pid, uint32_t parent_tid) {
  // A fork makes a new task: whatever the tid was called before belonged to a task
  // that has gone (its Exit lost, or the pid reused), not to this one.
  const uint32_t inherited = name_id(parent_pid, parent_tid);
  forget(tid);
  if (inherited != kNoName) set(pid, tid, inherited);
}

void ThreadNames::on_exit(uint32_t pid, uint32_t tid) {
  const auto slot = index_.find(tid_key(tid));
  if (slot && threads_[*slot].pid == pid) forget(tid);
}

}  // namespace uprof
