#include "model/atomics.hpp"

#include "model/fields.hpp"

namespace gpuprobe::model {

atomics_fit atomics_fit_from_json(const json &in) { return read_block<atomics_fit>(in); }

json to_json(const atomics_fit &f) { return write_block(f); }

atomics_variant atomics_variant_from_json(const json &in) {
  json j = in;
  atomics_variant v;
  take(j, "variant", v.variant);
  if (const auto it = j.find("points"); it != j.end() && it->is_array())
    for (const auto &p : *it)
      v.points.push_back({p.value("threads", 0.0), p.value("mean_cycles", 0.0)}); // as drawn
  if (const auto it = j.find("fit"); it != j.end() && it->is_object())
    v.fit = atomics_fit_from_json(*it);
  if (const auto it = j.find("queue_model"); it != j.end() && it->is_object()) {
    json q = *it;
    take(q, "applies", v.queue_model.applies);
    if (const auto m = q.find("mean_cycles"); m != q.end() && m->is_array())
      v.queue_model.mean_cycles = m->get<std::vector<double>>();
    take(q, "predicted_slope_cycles_per_thread", v.queue_model.predicted_slope_cycles_per_thread);
  }
  return v;
}

std::vector<atomics_variant> atomics_variants_from_json(const json &list) {
  std::vector<atomics_variant> out;
  if (list.is_array())
    for (const auto &v : list)
      out.push_back(atomics_variant_from_json(v));
  return out;
}

std::vector<atomics_variant> atomics_of_result(const json &doc) {
  const auto it = doc.find("atomics");
  if (it == doc.end() || !it->is_object() || !it->contains("variants"))
    return {};
  return atomics_variants_from_json(it->at("variants"));
}

// profile.json keeps the atomics block as the raw result has it.
std::vector<atomics_variant> atomics_of(const profile &p) { return atomics_of_result(p.detail); }

} // namespace gpuprobe::model
