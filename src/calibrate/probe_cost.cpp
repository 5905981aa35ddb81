#include "uprof/calibrate/probe_cost.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "uprof/present/text_table.h"
#include "uprof/util/text_file.h"

namespace uprof {
namespace {

constexpr std::string_view kMagic = "uprof-probe-cost 1";
constexpr InsnClass kMeasurable[] = {InsnClass::SingleStepped, InsnClass::Emulated, InsnClass::Optimized};

// Words in the file are space-separated: "push %rbp" is written "push%20%rbp".
std::string escape(std::string_view s) {
  std::string o;
  for (char c : s) o += c == ' ' ? std::string("%20") : std::string(1, c);
  return o.empty() ? "-" : o;
}
std::string unescape(std::string_view s) {
  if (s == "-") return "";
  std::string o;
  for (std::size_t i = 0; i < s.size(); i++) {
    if (s.substr(i, 3) == "%20") {
      o += ' ';
      i += 2;
    } else {
      o += s[i];
    }
  }
  return o;
}

std::optional<InsnClass> class_from_name(std::string_view name) {
  for (InsnClass c : kMeasurable)
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::string fmt_ns(double ns) {
  if (ns <= 0) return "0";
  char b[32];
  if (ns < 10) std::snprintf(b, sizeof b, "%.1f", ns);
  else std::snprintf(b, sizeof b, "%.0f", ns);
  return b;
}

}  // namespace

std::string to_text(const ProbeCostTable& t) {
  std::ostringstream os;
  os << kMagic << "\n";
  os << "kernel " << escape(t.kernel) << "\n";
  os << "boot_id " << escape(t.boot_id) << "\n";
  os << "arch " << arch_info(t.arch).name << "\n";
  os << "unprobed_ns " << t.unprobed_ns << "\n";
  for (EngineKind e : kEngineKindList) {
    for (InsnClass c : kMeasurable) {
      const ClassCost* cc = t.find(e, c);
      if (!cc) continue;
      os << "class " << to_string(e) << " " << to_string(c) << " " << escape(cc->insn) << " entry_ns " << cc->entry_ns
         << " return_ns " << cc->return_ns << " call_ns " << cc->call_ns << " inside_ns " << cc->inside_ns << "\n";
    }
  }
  return os.str();
}

Result<ProbeCostTable> parse_probe_costs(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != kMagic) return err("probe cost: not a uprof probe-cost file");
  ProbeCostTable t;
  int lineno = 1;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    auto bad = [&] { return err("probe cost: line ", lineno, ": cannot read '", line, "'"); };
    if (key == "kernel" || key == "boot_id") {
      std::string v;
      if (!(ls >> v)) return bad();
      (key == "kernel" ? t.kernel : t.boot_id) = unescape(v);
    } else if (key == "arch") {
      std::string v;
      ls >> v;
      auto a = arch_from_name(v);
      if (!a) return bad();
      t.arch = *a;
    } else if (key == "unprobed_ns") {
      if (!(ls >> t.unprobed_ns)) return bad();
    } else if (key == "class") {
      // "class bpf emulated push%20%rbp ...", or without the engine from a uprof that
      // measured perf only: "class emulated push%20%rbp ...".
      std::string name, insn;
      if (!(ls >> name)) return bad();
      EngineKind engine = EngineKind::Perf;
      if (auto e = engine_kind_from_name(name)) {
        engine = *e;
        if (!(ls >> name)) return bad();
      }
      if (!(ls >> insn)) return bad();
      auto c = class_from_name(name);
      if (!c) return bad();
      ClassCost cc;
      cc.insn = unescape(insn);
      std::string k;
      while (ls >> k) {
        double v = 0;
        if (!(ls >> v) || v < 0 || !std::isfinite(v)) return bad();
        if (k == "entry_ns") cc.entry_ns = v;
        else if (k == "return_ns") cc.return_ns = v;
        else if (k == "call_ns") cc.call_ns = v;
        else if (k == "inside_ns") cc.inside_ns = static_cast<uint64_t>(std::llround(v));
        // other keys: written by a newer uprof; ignored
      }
      cc.measured = true;
      t.of(engine, *c) = std::move(cc);
    }
    // unknown keys: ignored, for the same reason
  }
  return t;
}

std::string probe_cost_cache_path(std::string_view kernel, const char* xdg_cache_home, const char* home, bool root) {
  std::string dir;
  if (xdg_cache_home && *xdg_cache_home) dir = std::string(xdg_cache_home) + "/uprof";
  else if (root || !home || !*home) dir = "/var/cache/uprof";
  else dir = std::string(home) + "/.cache/uprof";
  std::string name(kernel);
  std::replace(name.begin(), name.end(), '/', '_');
  return dir + "/probe-cost-" + (name.empty() ? "unknown" : name);
}

std::vector<std::string> probe_cost_read_paths(std::string_view kernel, const char* xdg_cache_home, const char* home,
                                               bool root) {
  std::vector<std::string> paths{probe_cost_cache_path(kernel, xdg_cache_home, home, root)};
  if (xdg_cache_home && *xdg_cache_home) return paths;  // chosen on purpose (the tests' own cache)
  std::string system = probe_cost_cache_path(kernel, nullptr, nullptr, true);
  if (system != paths.front()) paths.push_back(std::move(system));
  return paths;
}

std::string probe_cost_cache_path() {
  return probe_cost_cache_path(current_kernel().release, std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"),
                               geteuid() == 0);
}

KernelIdentity current_kernel() {
  KernelIdentity k;
  utsname u{};
  if (uname(&u) == 0) k.release = u.release;
  k.boot_id = read_first_line("/proc/sys/kernel/random/boot_id");
  return k;
}

std::optional<ProbeCostTable> load_cached_probe_costs(std::string* from) {
  const KernelIdentity k = current_kernel();
  for (const std::string& path : probe_cost_read_paths(k.release, std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"),
                                                       geteuid() == 0)) {
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    auto t = parse_probe_costs(ss.str());
    if (!t || t->kernel != k.release || t->boot_id != k.boot_id || t->arch != host_arch()) continue;
    if (from) *from = path;
    return std::move(t).value();
  }
  return std::nullopt;
}

Status save_probe_costs(const ProbeCostTable& t, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return err("probe cost: ", std::filesystem::path(path).parent_path().string(), ": ", ec.message());
  // Write then rename, so that a reader never sees half a file.
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << to_text(t);
    if (!out.flush()) return err("probe cost: ", tmp, ": ", std::strerror(errno));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return err("probe cost: ", path, ": ", ec.message());
  return ok();
}

std::vector<InsnClass> unmeasured_classes(const ProbeCostTable* t, EngineKind engine,
                                          std::span<const InsnClass> needed) {
  std::vector<InsnClass> out;
  for (InsnClass c : kMeasurable)
    if (std::find(needed.begin(), needed.end(), c) != needed.end() && !(t && t->find(engine, c))) out.push_back(c);
  return out;
}

void merge_probe_costs(ProbeCostTable& into, const ProbeCostTable& fresh) {
  into.kernel = fresh.kernel;
  into.boot_id = fresh.boot_id;
  into.arch = fresh.arch;
  if (fresh.unprobed_ns > 0) into.unprobed_ns = fresh.unprobed_ns;
  for (EngineKind e : kEngineKindList)
    for (InsnClass c : kMeasurable)
      if (const ClassCost* cc = fresh.find(e, c)) into.of(e, c) = *cc;
}

std::string render_probe_costs(const ProbeCostTable& t, std::optional<EngineKind> only) {
  TextTable tab({{"FIRST INSTRUCTION"}, {"ENGINE"}, {"ENTRY/HIT", Align::Right}, {"RETURN/HIT", Align::Right},
                 {"ENTRY+RETURN/CALL", Align::Right}, {"IN A MEASURED CALL", Align::Right}});
  // A class's engines on adjacent rows, its name on the first: the figures to compare
  // are one above the other.
  for (InsnClass c : kMeasurable) {
    bool named = false;
    for (EngineKind e : kEngineKindList) {
      const ClassCost* cc = t.find(e, c);
      if (!cc || (only && *only != e)) continue;
      tab.add_row({named ? "" : std::string(to_string(c)) + " (" + cc->insn + ")", std::string(to_string(e)),
                   fmt_ns(cc->entry_ns), fmt_ns(cc->return_ns), fmt_ns(cc->call_ns),
                   fmt_ns(static_cast<double>(cc->inside_ns))});
      named = true;
    }
  }
  std::ostringstream os;
  os << "Probe cost on Linux " << t.kernel << " (" << arch_info(t.arch).name << "), ns added, with the values uprof "
     << "samples ($arg1 $arg2 on entry, $retval on return):\n\n"
     << tab.render() << "\nunprobed call: " << fmt_ns(t.unprobed_ns) << " ns. IN A MEASURED CALL: what the probes add "
     << "to the duration uprof reports for a call (report --compensate subtracts it).\n'uprof record' stores "
     << "the figures of the engine it records with.\n";
  return os.str();
}

}  // namespace uprof
