#include "uprof/resolve/find/debuginfod.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#include "uprof/util/unique_fd.h"

#if UPROF_HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

namespace uprof {

std::string debuginfod_urls() {
  const char* v = std::getenv("DEBUGINFOD_URLS");
  if (!v) return "";
  std::string s(v);
  if (s.find_first_not_of(" \t\n") == std::string::npos) return "";
  return s;
}

std::string debuginfod_error_prefix(const DebuginfodQuery& q) {
  return "debuginfod: no debug file for " + q.binary + " (build-id " + q.build_id + "): ";
}

std::string debuginfod_server_of(std::string_view url) {
  auto at = url.find("/buildid/");
  return std::string(at == std::string_view::npos ? url : url.substr(0, at));
}

namespace {

// libdebuginfod's errors (its man page's list), as the end of a sentence.
struct FailureText {
  int err;
  const char* text;  // "URLS" is replaced by $DEBUGINFOD_URLS
};
constexpr FailureText kFailures[] = {
    {ENOENT, "not found on URLS (or a miss from there is remembered in the client cache for 10 minutes)"},
    {ECONNREFUSED, "connection refused by URLS"},
    {EHOSTUNREACH, "cannot resolve the host of URLS"},
    {ENETUNREACH, "network unreachable for URLS"},
    {ECONNRESET, "connection reset by URLS"},
    {EACCES, "access denied by URLS"},
    {EINVAL, "malformed DEBUGINFOD_URLS: URLS"},
    {EMLINK, "too many redirects from URLS"},
    {EFBIG, "larger than DEBUGINFOD_MAXSIZE allows (from URLS)"},
    {EIO, "could not write the client cache (from URLS)"},
    {ENOSYS, "DEBUGINFOD_URLS is empty"},
};

}  // namespace

std::string debuginfod_failure(int neg_errno, std::string_view urls, std::string_view timeout_env,
                               std::string_view maxtime_env) {
  const int e = -neg_errno;
  if (e == ETIME) {
    // Either limit ends a lookup: the first bytes within DEBUGINFOD_TIMEOUT, the whole
    // file within DEBUGINFOD_MAXTIME (when set).
    std::string t = timeout_env.empty() ? std::string("90 s, the default of DEBUGINFOD_TIMEOUT")
                                        : "DEBUGINFOD_TIMEOUT=" + std::string(timeout_env) + " s";
    std::string s = "timed out: no data from " + std::string(urls) + " within " + t;
    if (!maxtime_env.empty() && std::atol(std::string(maxtime_env).c_str()) > 0)
      s += ", or not all of it within DEBUGINFOD_MAXTIME=" + std::string(maxtime_env) + " s";
    return s;
  }
  for (const auto& f : kFailures) {
    if (f.err != e) continue;
    std::string s = f.text;
    if (auto at = s.find("URLS"); at != std::string::npos) s.replace(at, 4, urls);
    return s;
  }
  return std::string(std::strerror(e)) + " (from " + std::string(urls) + ")";
}

#if UPROF_HAVE_DEBUGINFOD
namespace {

// The few entry points uprof calls, typed by the library's own header.
struct DebuginfodApi {
  decltype(&::debuginfod_begin) begin = nullptr;
  decltype(&::debuginfod_end) end = nullptr;
  decltype(&::debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&::debuginfod_set_progressfn) set_progressfn = nullptr;
  decltype(&::debuginfod_set_user_data) set_user_data = nullptr;
  decltype(&::debuginfod_get_user_data) get_user_data = nullptr;
  decltype(&::debuginfod_get_url) get_url = nullptr;
  std::string error;  // why it could not be loaded
};

// Loaded once and never closed: libcurl registers process-wide state.
const DebuginfodApi& api() {
  static const DebuginfodApi loaded = [] {
    DebuginfodApi a;
    void* so = ::dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (!so) {
      const char* why = ::dlerror();
      a.error = std::string("cannot load ") + DEBUGINFOD_SONAME + " (Debian: apt install libdebuginfod1): " +
                (why ? why : "dlopen failed");
      return a;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(so, name));
      if (!fn && a.error.empty()) a.error = std::string(DEBUGINFOD_SONAME) + " has no " + name;
    };
    sym(a.begin, "debuginfod_begin");
    sym(a.end, "debuginfod_end");
    sym(a.find_debuginfo, "debuginfod_find_debuginfo");
    sym(a.set_progressfn, "debuginfod_set_progressfn");
    sym(a.set_user_data, "debuginfod_set_user_data");
    sym(a.get_user_data, "debuginfod_get_user_data");
    sym(a.get_url, "debuginfod_get_url");
    return a;
  }();
  return loaded;
}

struct ClientEnd {
  void operator()(debuginfod_client* c) const { api().end(c); }
};
using ClientPtr = std::unique_ptr<debuginfod_client, ClientEnd>;

// What the progress callback, a plain C function, reaches through the client's user data.
struct ProgressContext {
  const DebuginfodQuery* query;
  DebuginfodListener* listener;
};

int on_progress(debuginfod_client* c, long done, long total) {
  auto* ctx = static_cast<ProgressContext*>(api().get_user_data(c));
  if (ctx && ctx->listener) {
    const char* url = api().get_url(c);
    ctx->listener->progress(*ctx->query, done, total, url ? debuginfod_server_of(url) : std::string());
  }
  return 0;  // never interrupt: a SIGINT ends uprof anyway
}

Result<DebuginfodFile> find(const DebuginfodQuery& q, DebuginfodListener* listener, const std::string& urls) {
  const std::string what = debuginfod_error_prefix(q);
  const DebuginfodApi& a = api();
  if (!a.error.empty()) return Error{what + a.error};
  ClientPtr client(a.begin());
  if (!client) return Error{what + "debuginfod_begin: " + std::strerror(errno)};
  ProgressContext ctx{.query = &q, .listener = listener};
  a.set_user_data(client.get(), &ctx);
  a.set_progressfn(client.get(), on_progress);

  char* path = nullptr;
  // build_id_len 0: the id is given as a hex string.
  int rc = a.find_debuginfo(client.get(), reinterpret_cast<const unsigned char*>(q.build_id.c_str()), 0, &path);
  std::unique_ptr<char, decltype(&std::free)> owned(path, &std::free);
  if (rc < 0) {
    const char* t = std::getenv("DEBUGINFOD_TIMEOUT");
    const char* m = std::getenv("DEBUGINFOD_MAXTIME");
    return Error{what + debuginfod_failure(rc, urls, t ? t : "", m ? m : "")};
  }
  UniqueFd fd(rc);
  if (!owned) return Error{what + "the client gave a file but not its path"};
  DebuginfodFile f;
  f.path = owned.get();
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0) f.size = static_cast<uint64_t>(st.st_size);
  // The library forgets the last URL when a lookup starts and learns it only when a
  // server sends data: none means the cache answered.
  if (const char* url = a.get_url(client.get())) f.server = debuginfod_server_of(url);
  return f;
}

}  // namespace
#endif

Result<DebuginfodFile> debuginfod_find_debuginfo(const DebuginfodQuery& q, DebuginfodListener* listener) {
  const std::string urls = debuginfod_urls();
#if UPROF_HAVE_DEBUGINFOD
  Result<DebuginfodFile> out = urls.empty() ? Result<DebuginfodFile>(Error{debuginfod_error_prefix(q) +
                                                                           "DEBUGINFOD_URLS is empty"})
                                            : find(q, listener, urls);
#else
  Result<DebuginfodFile> out = Error{debuginfod_error_prefix(q) + "this uprof was built without debuginfod support"};
#endif
  if (listener) listener->finished(q, out);
  return out;
}

}  // namespace uprof
