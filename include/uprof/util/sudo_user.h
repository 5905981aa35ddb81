// Who is behind a root uprof. `sudo uprof record` runs as root, but the files it writes
// belong to the user who typed it (SUDO_UID, SUDO_GID), and code that uprof must run
// from a file it was handed (an IFUNC's resolver, resolve/ifunc_choice.h) runs as that
// user, or as nobody: never as root.
#pragma once

#include <sys/types.h>

#include <optional>

namespace uprof {

struct UserIds {
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user who ran sudo: SUDO_UID (a number, not 0) and SUDO_GID (else that user's
// group from the password database), when uprof's real uid is 0; nullopt otherwise.
std::optional<UserIds> sudo_user();

// The user to run another file's code as: the sudo user, else "nobody" (65534:65534
// where the password database has none).
UserIds unprivileged_user();

}  // namespace uprof
