#pragma once
// Order statistics every stage uses (probes' per-hop distributions, analysis, validate).
#include <cstddef>
#include <vector>

namespace gpuprobe {

double median(std::vector<double> v);
// The median of v[from, to).
double median(const std::vector<double> &v, std::size_t from, std::size_t to);
double quantile(std::vector<double> v,
                double q); // linear interpolation, q in [0,1]; NaN when empty

} // namespace gpuprobe
