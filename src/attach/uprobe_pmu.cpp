#include "uprof/attach/uprobe_pmu.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace uprof {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::optional<unsigned> parse_uint(std::string_view s) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

Result<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return err("attach: cannot read ", path, ": ", std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// "attach: format field ..." -> "attach: /sys/.../format/retprobe: format field ...".
Error with_path(const std::string& path, const Error& e) {
  std::string_view m = e.message;
  if (m.starts_with("attach: ")) m.remove_prefix(8);
  return err("attach: ", path, ": ", m);
}

}  // namespace

Result<ConfigField> parse_format_field(std::string_view text) {
  std::string_view s = trim(text);
  auto colon = s.find(':');
  if (colon == std::string_view::npos)
    return err("attach: format field '", s, "': expected 'config:LO[-HI]'");
  std::string_view word = s.substr(0, colon), bits = s.substr(colon + 1);
  ConfigField f;
  if (word == "config") f.word = 0;
  else if (word == "config1") f.word = 1;
  else if (word == "config2") f.word = 2;
  else return err("attach: format field '", s, "': unknown word '", word, "'");
  if (bits.find(',') != std::string_view::npos)
    return err("attach: format field '", s, "': split bit ranges are not supported");
  auto dash = bits.find('-');
  auto lo = parse_uint(bits.substr(0, dash));
  auto hi = dash == std::string_view::npos ? lo : parse_uint(bits.substr(dash + 1));
  if (!lo || !hi) return err("attach: format field '", s, "': bad bit range '", bits, "'");
  if (*lo > *hi || *hi > 63)
    return err("attach: format field '", s, "': bit range ", *lo, "-", *hi, " is outside 0-63");
  f.lo = static_cast<uint8_t>(*lo);
  f.hi = static_cast<uint8_t>(*hi);
  return f;
}

std::string uprobe_pmu_dir() {
  const char* root = std::getenv("UPROF_SYSFS_ROOT");
  if (!root || !*root) return kUprobePmuDir;
  return std::string(root) + "/bus/event_source/devices/uprobe";
}

Result<UprobePmu> read_uprobe_pmu(const std::string& sysfs_dir) {
  struct stat st {};
  if (::stat(sysfs_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return err("attach: no uprobe PMU at ", sysfs_dir,
               ": the kernel needs CONFIG_UPROBES and CONFIG_UPROBE_EVENTS (Linux 4.17 or later)");
  UprobePmu pmu;
  UPROF_ASSIGN(std::string type_text, read_small_file(sysfs_dir + "/type"));
  auto type = parse_uint(trim(type_text));
  if (!type) return err("attach: ", sysfs_dir, "/type: not a number: '", trim(type_text), "'");
  pmu.type = *type;

  UPROF_ASSIGN(std::string retprobe_text, read_small_file(sysfs_dir + "/format/retprobe"));
  auto retprobe = parse_format_field(retprobe_text);
  if (!retprobe) return with_path(sysfs_dir + "/format/retprobe", retprobe.error());
  if (retprobe->word != 0 || retprobe->width() != 1)
    return err("attach: ", sysfs_dir, "/format/retprobe: expected one bit of config, got '",
               trim(retprobe_text), "'");
  pmu.retprobe = *retprobe;

  std::string ref_path = sysfs_dir + "/format/ref_ctr_offset";
  if (::stat(ref_path.c_str(), &st) == 0) {
    UPROF_ASSIGN(std::string ref_text, read_small_file(ref_path));
    auto ref = parse_format_field(ref_text);
    if (!ref) return with_path(ref_path, ref.error());
    if (ref->word != 0)
      return err("attach: ", ref_path, ": expected a field of config, got '", trim(ref_text), "'");
    pmu.ref_ctr_offset = *ref;
  }
  return pmu;
}

}  // namespace uprof
