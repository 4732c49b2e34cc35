#pragma once
// Order statistics every stage uses (probes' per-hop distributions, analysis, validate).
#include <vector>

namespace gpuprobe {

double median(std::vector<double> v);
double quantile(std::vector<double> v,
                double q); // linear interpolation, q in [0,1]; NaN when empty

} // namespace gpuprobe
