#include "uprof/util/sudo_user.h"

#include <pwd.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace uprof {
namespace {

constexpr uid_t kNobody = 65534;

// A whole decimal number, as sudo writes it ("1000"); nullopt for "", "12x", "-1".
std::optional<unsigned long> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  const std::string_view s(v);
  unsigned long n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n >= static_cast<unsigned long>(static_cast<uid_t>(-1)))
    return std::nullopt;
  return n;
}

std::optional<gid_t> primary_group(uid_t uid) {
  passwd pw{}, *found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) != 0 || !found) return std::nullopt;
  return found->pw_gid;
}

}  // namespace

std::optional<UserIds> sudo_user() {
  if (::getuid() != 0) return std::nullopt;
  const auto uid = env_number("SUDO_UID");
  if (!uid || *uid == 0) return std::nullopt;
  const auto gid = env_number("SUDO_GID");
  const uid_t u = static_cast<uid_t>(*uid);
  return UserIds{.uid = u, .gid = gid ? static_cast<gid_t>(*gid) : primary_group(u).value_or(kNobody)};
}

UserIds unprivileged_user() {
  if (auto s = sudo_user()) return *s;
  passwd pw{}, *found = nullptr;
  char buf[4096];
  if (::getpwnam_r("nobody", &pw, buf, sizeof buf, &found) == 0 && found && found->pw_uid != 0)
    return UserIds{.uid = found->pw_uid, .gid = found->pw_gid};
  return UserIds{.uid = kNobody, .gid = kNobody};
}

}  // namespace uprof
