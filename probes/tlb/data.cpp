#include "probes/tlb/data.hpp"
#include "probes/tlb/driver.hpp"

#include "analysis/input_text.hpp"

#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/file_head.hpp"
#include "probes/result_file.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace gpuprobe::probes {

using namespace analysis; // the analysis/ tools: fits, input text, statistics, the models

namespace {

std::vector<std::string> split_commas(const std::string &line) {
  std::vector<std::string> cells;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ','))
    cells.push_back(cell);
  if (!line.empty() && line.back() == ',')
    cells.emplace_back(); // keep the trailing empty cell
  return cells;
}

std::string trim(const std::string &s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

} // namespace

void finish_curve(tlb_curve &c) {
  std::vector<std::size_t> idx(c.footprint_bytes.size());
  for (std::size_t i = 0; i < idx.size(); ++i)
    idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return c.footprint_bytes[a] < c.footprint_bytes[b];
  });
  tlb_curve s{c.source, c.stride_bytes, {}, {}, c.median, {}};
  const bool means = c.mean_cycles.size() == c.cycles.size();
  for (std::size_t i : idx) {
    if (!s.footprint_bytes.empty() && s.footprint_bytes.back() == c.footprint_bytes[i])
      continue;
    s.footprint_bytes.push_back(c.footprint_bytes[i]);
    s.cycles.push_back(c.cycles[i]);
    if (means)
      s.mean_cycles.push_back(c.mean_cycles[i]);
  }
  c = std::move(s);
}

namespace {

// The header's strides ("64,128,256," in KB), in bytes.
std::vector<double> csv_strides(const std::string &cells_text, const std::string &source,
                                int lineno) {
  std::vector<double> strides;
  for (const auto &c : split_commas(cells_text)) {
    if (trim(c).empty())
      continue;
    double kb = 0;
    if (!parse_number(c, kb) || kb <= 0)
      fail_at(source, lineno, "stride '" + c + "' is not a positive number");
    strides.push_back(kb * 1024.0);
  }
  return strides;
}

// One data row ("footprint MB, cycles per stride, ..."): a point of each stride that reaches it.
void csv_row(const std::string &t, const std::string &source, int lineno,
             std::vector<tlb_curve> &curves) {
  const auto cells = split_commas(t);
  double mb = 0;
  if (cells.empty() || !parse_number(cells[0], mb) || mb <= 0)
    fail_at(source, lineno,
            "footprint '" + (cells.empty() ? std::string() : cells[0]) +
                "' is not a positive number");
  if (cells.size() > curves.size() + 2 ||
      (cells.size() == curves.size() + 2 && !trim(cells.back()).empty()))
    fail_at(source, lineno, "more cells than strides in the header");
  for (std::size_t k = 0; k < curves.size() && k + 1 < cells.size(); ++k) {
    if (trim(cells[k + 1]).empty())
      continue; // this stride does not reach this footprint
    double v = 0;
    if (!parse_number(cells[k + 1], v) || v <= 0)
      fail_at(source, lineno, "cell '" + trim(cells[k + 1]) + "' is not a positive number");
    curves[k].footprint_bytes.push_back(mb * 1024.0 * 1024.0);
    curves[k].cycles.push_back(v);
  }
}

} // namespace

void parse_cuda_gpu_tlb_csv(const std::string &text, const std::string &source, tlb_dataset &out) {
  std::stringstream in(text);
  std::string line;
  int lineno = 0;
  std::vector<double> strides;
  std::vector<tlb_curve> curves;
  std::string device;
  int rows = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string t = trim(line);
    if (t.empty())
      continue;
    if (t[0] == '#') {
      if (t.size() > 1 && t[1] == ',') { // "#,64,128,256," : strides in KB
        strides = csv_strides(t.substr(2), source, lineno);
        curves.assign(strides.size(), tlb_curve{});
        for (std::size_t i = 0; i < strides.size(); ++i)
          curves[i] = {source, strides[i], {}, {}};
      } else if (device.empty()) { // "#Tesla K80: cuda 3.7, reduction mode: avg"
        const auto colon = t.find(':');
        device = trim(t.substr(1, colon == std::string::npos ? std::string::npos : colon - 1));
      }
      continue;
    }
    if (strides.empty())
      fail_at(source, lineno, "data before the '#,<strides>' header: not a cuda-gpu-tlb CSV");
    csv_row(t, source, lineno, curves);
    ++rows;
  }
  if (strides.empty() || rows == 0)
    throw gpuprobe::error(source + ": no data rows: not a cuda-gpu-tlb CSV");
  if (out.device_name.empty() || out.device_name == "unknown")
    out.device_name = device.empty() ? "unknown" : device;
  for (auto &c : curves) {
    c.mean_cycles = c.cycles; // "reduction mode: avg"
    finish_curve(c);
    if (c.footprint_bytes.size() >= 3)
      out.curves.push_back(std::move(c));
  }
  out.sources.push_back(source);
}

void parse_gpuprobe_tlb_result(const nlohmann::json &doc, const std::string &source,
                               tlb_dataset &out) {
  const auto r = read_result_file(doc, source, "tlb", "TLB", [](const nlohmann::json &d) {
    return probes::tlb_result_from_json(d);
  });
  add_tlb_result(r, source, out);
}

void add_tlb_result(const tlb_result &r, const std::string &source, tlb_dataset &out) {
  out.device = r.device;
  const auto dev = device_info_from_json(out.device);
  out.device_name = dev.name.empty() ? "unknown" : dev.name;
  out.l2_bytes = dev.l2_bytes;
  out.alloc = r.alloc;
  std::map<double, tlb_curve> by_stride;
  for (const auto &p : r.points) {
    const bool first = out.curves.empty() && by_stride.empty();
    out.sm = first ? p.smid : out.sm == p.smid ? out.sm : -1;
    const double stride = double(p.stride_bytes), fp = double(p.footprint_bytes);
    if (!(stride > 0) || !(fp > 0) || !std::isfinite(p.median) || p.median <= 0)
      throw gpuprobe::error("'" + source +
                            "': a point has a non-positive stride, footprint or latency");
    auto &c = by_stride[stride];
    c.median = true;
    c.source = source;
    c.stride_bytes = stride;
    c.footprint_bytes.push_back(fp);
    c.cycles.push_back(p.median);
    c.mean_cycles.push_back(p.mean);
    c.disturbed = c.disturbed || p.disturbed;
  }
  for (auto &[s, c] : by_stride) {
    if (std::any_of(c.mean_cycles.begin(), c.mean_cycles.end(), [](double v) { return !(v > 0); }))
      c.mean_cycles.clear(); // a result without means: no structure from it
    finish_curve(c);
    if (c.footprint_bytes.size() >= 3)
      out.curves.push_back(std::move(c));
  }
  out.sources.push_back(source);
}

tlb_dataset load_tlb_inputs(const std::vector<std::string> &paths, bool allow_mixed) {
  std::vector<tlb_input> inputs;
  for (const auto &p : paths)
    inputs.push_back({p, nullptr});
  return load_tlb_inputs(inputs, allow_mixed);
}

tlb_dataset load_tlb_inputs(const std::vector<tlb_input> &inputs, bool allow_mixed) {
  if (inputs.empty())
    throw gpuprobe::error("no input file given (use --input FILE)");
  tlb_dataset ds;
  std::string first_uuid, first_path;
  for (const auto &[path, given] : inputs) {
    nlohmann::json parsed;
    const nlohmann::json *doc = given;
    if (!doc) { // read here: gpuprobe JSON or the 2017 tool's CSV, told apart by content
      const auto in = read_input(path);
      if (!in.is_json) {
        parse_cuda_gpu_tlb_csv(in.text, path, ds);
        continue;
      }
      parsed = parse_json_text(in.text, path);
      doc = &parsed;
    }
    const std::string uuid = model::file_head_from_json(*doc, path).uuid;
    if (!uuid.empty() && first_uuid.empty())
      first_uuid = uuid, first_path = path;
    else if (!uuid.empty() && uuid != first_uuid && !allow_mixed)
      throw gpuprobe::error("'" + path + "' was measured on " + uuid + ", '" + first_path +
                            "' on " + first_uuid +
                            ": several inputs are one GPU (--allow-mixed analyzes them as one)");
    parse_gpuprobe_tlb_result(*doc, path, ds);
  }
  if (ds.curves.empty())
    throw gpuprobe::error("the input holds no curve with 3 or more points");
  return ds;
}

} // namespace gpuprobe::probes
