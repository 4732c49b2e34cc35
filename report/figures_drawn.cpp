#include "report/figures_drawn.hpp"

#include "common/json_io.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

namespace gpuprobe::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A plain file's bytes ("" for anything else: a link is not followed out of the folder).
std::string file_text(const fs::path &p) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(p, ec)))
    return {};
  std::ifstream in(p, std::ios::binary);
  return in ? std::string(std::istreambuf_iterator<char>(in), {}) : std::string();
}

} // namespace

std::string fnv1a64_hex(const std::string &text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

json plotter_stamp(const std::string &python, const std::string &script) {
  return {{"python", python}, {"script", script}, {"script_fnv1a", fnv1a64_hex(file_text(script))}};
}

std::set<std::string> take_figures_drawn(const std::vector<report_figure> &figures,
                                         const fs::path &earlier, const fs::path &figs,
                                         const json &stamp) {
  std::set<std::string> taken;
  json manifest, not_drawn = json::object();
  try {
    const std::string text = file_text(earlier / "manifest.json"); // a plain file, read once
    if (text.empty())
      return taken;
    manifest = parse_json_text(text, (earlier / "manifest.json").string());
    if (manifest.value("drawn_by", json()) != stamp || !manifest.at("figures").is_array())
      return taken;
  } catch (const std::exception &) {
    return taken; // no earlier figures, or none this plotter drew
  }
  try {
    not_drawn = read_json_file((earlier / "not_drawn.json").string());
  } catch (const std::exception &) {
    // none listed
  }
  std::map<std::string, json> entries; // id -> its manifest entry
  for (const auto &e : manifest["figures"])
    if (e.is_object() && e.contains("id") && e["id"].is_string())
      entries[e["id"].get<std::string>()] = e;
  for (const auto &f : figures) {
    const auto it = entries.find(f.id);
    if (it == entries.end() || it->second != f.manifest() || not_drawn.contains(f.id) ||
        file_text(earlier / (f.id + ".csv")) != f.csv)
      continue;
    const auto drawn = [&](const char *ext) {
      const fs::path p = earlier / (f.id + ext);
      std::error_code ec;
      return fs::is_regular_file(fs::symlink_status(p, ec)) && fs::file_size(p, ec) > 0 && !ec;
    };
    if (!drawn(".png") || !drawn(".svg"))
      continue;
    bool copied = true;
    for (const char *ext : {".png", ".svg"}) {
      std::error_code ec;
      fs::copy_file(earlier / (f.id + ext), figs / (f.id + ext),
                    fs::copy_options::overwrite_existing, ec);
      copied = copied && !ec;
    }
    if (copied)
      taken.insert(f.id);
  }
  return taken;
}

} // namespace gpuprobe::report
