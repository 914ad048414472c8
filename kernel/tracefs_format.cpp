// Finds tracefs, parses event format files into typed fields and lists tracepoints.
#include "kernel/tracefs_format.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace mt {

namespace {

constexpr long kTracefsMagic = 0x74726163;

bool is_tracefs(const std::string &path) {
  struct statfs st;
  return statfs(path.c_str(), &st) == 0 && st.f_type == kTracefsMagic;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "field:unsigned int foo[4]" -> type "unsigned int", name "foo", array 4.
void split_declaration(const std::string &decl, TraceField &field) {
  std::string d = trim(decl);
  if (d.rfind("__data_loc ", 0) == 0)
    field.data_loc = true;
  size_t bracket = d.find('[');
  std::string head = d;
  if (bracket != std::string::npos && !field.data_loc) {
    field.array_len = std::atoi(d.c_str() + bracket + 1);
    head = trim(d.substr(0, bracket));
  }
  size_t name_start = head.find_last_of(" *");
  if (field.data_loc) {
    name_start = d.find_last_of(' ');
    head = d;
  }
  field.name = head.substr(name_start + 1);
  field.type = trim(head.substr(0, name_start + 1));
}

}  // namespace

const TraceField *TraceFormat::find(const std::string &name) const {
  for (const auto &f : fields)
    if (f.name == name)
      return &f;
  return nullptr;
}

TraceFormat parse_trace_format(const std::string &text) {
  TraceFormat format;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string l = trim(line);
    if (l.rfind("name:", 0) == 0)
      format.event = trim(l.substr(5));
    if (l.rfind("field:", 0) != 0)
      continue;
    TraceField field;
    std::istringstream parts(l);
    std::string part;
    while (std::getline(parts, part, ';')) {
      part = trim(part);
      if (part.rfind("field:", 0) == 0)
        split_declaration(part.substr(6), field);
      else if (part.rfind("offset:", 0) == 0)
        field.offset = std::atoi(part.c_str() + 7);
      else if (part.rfind("size:", 0) == 0)
        field.size = std::atoi(part.c_str() + 5);
      else if (part.rfind("signed:", 0) == 0)
        field.is_signed = part[7] == '1';
    }
    if (field.name.empty() || field.size <= 0)
      throw Error("cannot parse tracepoint field: " + l);
    if (field.name.rfind("common_", 0) != 0)
      format.fields.push_back(field);
  }
  return format;
}

std::string tracefs_root() {
  static std::string root = [] {
    for (const char *path : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
      if (is_tracefs(path))
        return std::string(path);
    // Root may mount it where the kernel expects it.
    if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
      return std::string("/sys/kernel/tracing");
    return std::string();
  }();
  return root;
}

std::optional<TraceFormat> read_trace_format(const std::string &category,
                                             const std::string &event) {
  std::string root = tracefs_root();
  if (root.empty())
    throw Error("tracefs is not mounted and cannot be mounted at /sys/kernel/tracing");
  std::ifstream file(root + "/events/" + category + "/" + event + "/format");
  if (!file)
    return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  TraceFormat format = parse_trace_format(text.str());
  format.category = category;
  format.event = event;
  return format;
}

std::vector<std::string> list_tracepoints() {
  std::vector<std::string> names;
  std::string root = tracefs_root();
  if (root.empty())
    return names;
  std::ifstream file(root + "/available_events");
  std::string line;
  while (std::getline(file, line))
    if (!line.empty())
      names.push_back(line);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace mt
