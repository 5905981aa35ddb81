// The resolver's IFUNC selection: which implementation each IFUNC symbol of a file
// selects, in the process of -p where it has bound one, else as this machine's loader
// selects it (resolve/ifunc_choice.h), asked once per file and name.
#include <optional>
#include <string>
#include <vector>

#include "uprof/resolve/ifunc_choice.h"
#include "uprof/resolve/resolver.h"

namespace uprof {

Result<std::vector<IfuncSelection>> Resolver::select_ifuncs(const Image& img, const std::vector<const Function*>& ifuncs,
                                                            const std::string& version) {
  std::vector<IfuncQuery> queries;
  for (const Function* f : ifuncs) queries.push_back({.name = f->name(), .version = version, .resolver = f->addr});
  auto key = [&](const IfuncQuery& q) { return img.path + "\n" + q.name + "@" + q.version; };
  std::vector<IfuncSelection> out(queries.size());
  std::vector<std::size_t> unknown;
  for (std::size_t i = 0; i < queries.size(); i++) {
    auto it = ifunc_choices_.find(key(queries[i]));
    if (it != ifunc_choices_.end()) out[i] = it->second;
    else unknown.push_back(i);
  }
  if (unknown.empty()) return out;
  std::vector<IfuncQuery> ask;
  for (std::size_t i : unknown) ask.push_back(queries[i]);
  // -p PID: what that process's loader bound; the rest as this machine's loader selects it.
  std::vector<std::optional<uint64_t>> bound(ask.size());
  std::string not_bound = "IFUNC, selected for this CPU";
  if (opts_.pid > 0) {
    auto in_process = process_choices(opts_.pid, img.elf, ask);
    if (in_process) {
      bound = std::move(in_process).value();
      not_bound += "; process " + std::to_string(opts_.pid) + " has bound no reference to it yet";
    } else {
      not_bound += "; " + in_process.error().message;
    }
  }
  std::vector<IfuncQuery> loader;
  for (std::size_t i = 0; i < ask.size(); i++)
    if (!bound[i]) loader.push_back(ask[i]);
  std::vector<uint64_t> by_loader;
  if (!loader.empty()) {
    // A process that has not bound it yet selects as uprof's loader would, unless it
    // started with other tunables: then which one it will select is not known.
    if (opts_.pid > 0) {
      if (auto same = same_selection_as_here(opts_.pid); !same)
        return err("process ", opts_.pid, " has bound no reference to '", loader.front().name,
                   "' yet, and its loader may select otherwise: ", same.error().message);
    }
    UPROF_ASSIGN(by_loader, ask_loader(img.elf, loader));
  }
  for (std::size_t i = 0, next = 0; i < ask.size(); i++) {
    IfuncSelection s = bound[i] ? IfuncSelection{*bound[i], "IFUNC, as process " + std::to_string(opts_.pid) + " bound it"}
                                : IfuncSelection{by_loader[next++], not_bound};
    ifunc_choices_[key(ask[i])] = s;
    out[unknown[i]] = std::move(s);
  }
  return out;
}

}  // namespace uprof
