// Owners for file descriptors and mappings: not copyable, closed exactly once.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

namespace uprof {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

class UniqueMmap {
 public:
  UniqueMmap() = default;
  UniqueMmap(void* addr, std::size_t len) : addr_(addr), len_(len) {}
  UniqueMmap(const UniqueMmap&) = delete;
  UniqueMmap& operator=(const UniqueMmap&) = delete;
  UniqueMmap(UniqueMmap&& o) noexcept
      : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
  UniqueMmap& operator=(UniqueMmap&& o) noexcept {
    if (this != &o) {
      reset();
      addr_ = std::exchange(o.addr_, nullptr);
      len_ = std::exchange(o.len_, 0);
    }
    return *this;
  }
  ~UniqueMmap() { reset(); }

  void* get() const { return addr_; }
  std::size_t size() const { return len_; }
  bool valid() const { return addr_ != nullptr; }
  void reset() {
    if (addr_) ::munmap(addr_, len_);
    addr_ = nullptr;
    len_ = 0;
  }

 private:
  void* addr_ = nullptr;
  std::size_t len_ = 0;
};

}  // namespace uprof
