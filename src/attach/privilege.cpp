#include "uprof/attach/privilege.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace uprof {

bool can_probe() {
  __user_cap_header_struct header{.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return ::geteuid() == 0;
  return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}

Status check_probe_privilege(const char* command) {
  if (can_probe()) return ok();
  return err(command, ": uprobes need root (CAP_SYS_ADMIN), which this process does not have: run 'sudo uprof ",
             command, " ...'");
}

}  // namespace uprof
