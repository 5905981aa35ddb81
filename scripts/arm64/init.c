/* /init of the arm64 live-test initramfs (scripts/arm64_live_test.sh), built as a
 * static aarch64 program. It mounts /proc, /sys and tracefs, runs `uprof record` once
 * per line of /cases, prints what happened on the console, and powers off.
 *
 * /cases, one case per line, fields separated by '|':
 *   NAME|ARG|ARG...        ->  /bin/uprof record -o /tmp/NAME.data ARG ARG...
 * e.g.  static_O2|-e|add %x0 %x1 $retval|--|/fx/workload_static|calls|2000
 *
 * Console protocol (the host greps for these; kernel messages may come in between):
 *   ARM64-INFO key=value ...                  the guest: kernel, uprobe PMU type, tracefs
 *   ARM64-OUT NAME: LINE                      every line uprof and the workload printed
 *   ARM64-CASE NAME rc=R events=E lost=L kernel=K calls=C
 *                                             R: exit status (-1: killed at the time limit);
 *                                             E/L/K from uprof's summary line, C from the
 *                                             workload's "calls N" (-1 when not printed)
 *   ARM64-SCRIPT NAME: LINE                   for a case named args* or usdt*: `uprof script` of its file,
 *                                             run in the guest (the host compares its own)
 *   ARM64-DATA NAME SIZE                      then the data file in base64, 76 chars a line:
 *   ARM64-B64 NAME BASE64
 *   ARM64-END NAME SIZE
 *   ARM64-DONE                                all cases ran; powering off
 * Nothing is copied out otherwise: the host decodes the data files from the console.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxArgs = 32, kCaseSeconds = 120, kMaxOutput = 1 << 16 };

static void say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fflush(stdout);
}

/* The kernel opens /dev/console for init when the initramfs has the node (the host
 * makes it when it runs as root); otherwise fall back to devtmpfs. */
static void setup_console(void) {
  if (fcntl(1, F_GETFD) != -1) return;
  mkdir("/dev", 0755);
  mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
  int fd = open("/dev/console", O_RDWR);
  if (fd < 0) return;
  dup2(fd, 0);
  dup2(fd, 1);
  dup2(fd, 2);
  if (fd > 2) close(fd);
}

static const char* try_mount(const char* src, const char* dir, const char* type) {
  mkdir(dir, 0755);
  if (mount(src, dir, type, 0, NULL) == 0 || errno == EBUSY) return "ok";
  return strerror(errno);
}

static void read_line(const char* path, char* buf, size_t size) {
  buf[0] = 0;
  FILE* f = fopen(path, "r");
  if (!f) {
    snprintf(buf, size, "none");
    return;
  }
  if (!fgets(buf, (int)size, f)) snprintf(buf, size, "empty");
  fclose(f);
  buf[strcspn(buf, "\n")] = 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "uprof: 4,000 events recorded, 0 lost (kernel counted 4,000); /tmp/x.data, 41.2 kB" */
static void parse_summary(const char* line, long* events, long* lost, long* kernel) {
  char plain[512];
  size_t n = 0;
  for (const char* p = line; *p && n + 1 < sizeof plain; p++)
    if (*p != ',' || !(p[1] >= '0' && p[1] <= '9')) plain[n++] = *p;
  plain[n] = 0;
  sscanf(plain, "uprof: %ld events recorded, %ld lost (kernel counted %ld)", events, lost, kernel);
}

/* Runs uprof with the case's arguments, stdout and stderr into one pipe, killed
 * after kCaseSeconds. Prints every line, then the ARM64-CASE line. */
static void run_case(const char* name, char** args, int nargs, const char* out_path) {
  char* argv[kMaxArgs + 8];
  int k = 0;
  argv[k++] = "/bin/uprof";
  argv[k++] = "record";
  argv[k++] = "--no-calibrate"; /* the cases check what is recorded, not what a probe costs */
  argv[k++] = "-o";
  argv[k++] = (char*)out_path;
  for (int i = 0; i < nargs; i++) argv[k++] = args[i];
  argv[k] = NULL;

  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    say("ARM64-CASE %s rc=-2 events=-1 lost=-1 kernel=-1 calls=-1 (pipe: %s)\n", name, strerror(errno));
    return;
  }
  double t0 = now_s();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    dup2(p[1], 2);
    execv(argv[0], argv);
    dprintf(2, "init: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(p[1]);

  static char out[kMaxOutput + 1];
  size_t used = 0;
  int killed = 0;
  for (;;) {
    double left = kCaseSeconds - (now_s() - t0);
    if (left <= 0) {
      kill(pid, SIGKILL);
      killed = 1;
      break;
    }
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    int r = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t got = read(p[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    size_t take = (size_t)got;
    if (take > kMaxOutput - used) take = kMaxOutput - used;
    memcpy(out + used, buf, take);
    used += take;
  }
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out[used] = 0;

  long events = -1, lost = -1, kernel = -1, calls = -1;
  for (char* line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    say("ARM64-OUT %s: %s\n", name, line);
    if (!strncmp(line, "uprof: ", 7) && strstr(line, " events recorded, "))
      parse_summary(line, &events, &lost, &kernel);
    else
      sscanf(line, "calls %ld", &calls);
  }
  int rc = killed ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  say("ARM64-CASE %s rc=%d events=%ld lost=%ld kernel=%ld calls=%ld seconds=%.2f\n", name, rc, events, lost,
      kernel, calls, now_s() - t0);
}

/* Runs /bin/uprof ARGS, each line of its stdout (and stderr when `both`) printed as
 * "TAG: LINE"; returns its exit status (-1 when it could not run or was killed). */
static int run_lines(const char* tag, char* const argv[], int both) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    if (both) dup2(p[1], 2);
    execv("/bin/uprof", argv);
    _exit(127);
  }
  close(p[1]);
  FILE* f = fdopen(p[0], "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    say("%s: %s\n", tag, line);
  }
  if (f) fclose(f);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `uprof script FILE` in the guest, each line printed as ARM64-SCRIPT NAME: LINE. */
static void run_script(const char* name, const char* path) {
  char tag[128];
  snprintf(tag, sizeof tag, "ARM64-SCRIPT %s", name);
  char* const argv[] = {"/bin/uprof", "script", (char*)path, NULL};
  run_lines(tag, argv, 0);
}

static void print_base64(const char* name, const char* path) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  FILE* f = fopen(path, "rb");
  if (!f) {
    say("ARM64-DATA %s -1 (%s: %s)\n", name, path, strerror(errno));
    return;
  }
  struct stat st;
  fstat(fileno(f), &st);
  say("ARM64-DATA %s %lld\n", name, (long long)st.st_size);
  /* 57 input bytes -> one 76-character line. */
  unsigned char in[57];
  size_t n;
  while ((n = fread(in, 1, sizeof in, f)) > 0) {
    char line[80];
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
      unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
      line[o++] = tab[v >> 18 & 63];
      line[o++] = tab[v >> 12 & 63];
      line[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
      line[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    line[o] = 0;
    printf("ARM64-B64 %s %s\n", name, line);
  }
  fclose(f);
  say("ARM64-END %s %lld\n", name, (long long)st.st_size);
}

int main(void) {
  setup_console();
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGPIPE, SIG_IGN);

  const char* proc = try_mount("proc", "/proc", "proc");
  const char* sys = try_mount("sysfs", "/sys", "sysfs");
  const char* tracefs = try_mount("tracefs", "/sys/kernel/tracing", "tracefs");
  try_mount("tmpfs", "/tmp", "tmpfs");
  struct utsname u;
  uname(&u);
  char pmu_type[64], retprobe[64];
  read_line("/sys/bus/event_source/devices/uprobe/type", pmu_type, sizeof pmu_type);
  read_line("/sys/bus/event_source/devices/uprobe/format/retprobe", retprobe, sizeof retprobe);
  say("ARM64-INFO kernel=%s machine=%s cpus=%ld proc=%s sysfs=%s tracefs=%s uprobe_pmu_type=%s retprobe=%s\n",
      u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN), proc, sys, tracefs, pmu_type, retprobe);

  FILE* cases = fopen("/cases", "r");
  if (!cases) {
    say("ARM64-INFO no /cases: %s\n", strerror(errno));
  } else {
    char line[2048];
    while (fgets(line, sizeof line, cases)) {
      line[strcspn(line, "\n")] = 0;
      if (!line[0] || line[0] == '#') continue;
      char* fields[kMaxArgs + 1];
      int n = 0;
      for (char *s = line, *f; (f = strsep(&s, "|")) && n <= kMaxArgs;) fields[n++] = f;
      if (n < 2) continue;
      char path[256];
      snprintf(path, sizeof path, "/tmp/%s.data", fields[0]);
      run_case(fields[0], fields + 1, n - 1, path);
      if (!strncmp(fields[0], "args", 4) || !strncmp(fields[0], "usdt", 4)) run_script(fields[0], path);
      print_base64(fields[0], path);
      unlink(path);  /* keep the initramfs's memory small */
    }
    fclose(cases);
  }
  /* What a probe hit costs on this kernel, by arm64's own bench targets (under TCG the
   * figures say nothing about hardware; the host checks that both classes were measured). */
  char* const bench[] = {"/bin/uprof", "bench", "--quick", "--no-cache", NULL};
  double t0 = now_s();
  int rc = run_lines("ARM64-BENCH", bench, 1);
  say("ARM64-BENCH-RC %d seconds=%.2f\n", rc, now_s() - t0);
  say("ARM64-DONE\n");
  sync();
  reboot(RB_POWER_OFF);
  return 0;  /* not reached; if it were, the kernel panics and qemu -no-reboot exits */
}
