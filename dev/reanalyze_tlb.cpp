// Prints each TLB level and candidate that `analyze_tlb` finds in each input, one line each, so
// two builds of the analysis can be compared over every committed sweep and fixture (issue 37).
// Build against the library: g++ -std=c++17 -I. -Ibuild/generated dev/reanalyze_tlb.cpp
// build/libgpuprobe_lib.a -L/usr/local/cuda/lib64 -lcudart -o reanalyze_tlb; run:
// reanalyze_tlb NAME=FILE[,FILE...] ...
#include "probes/tlb/data.hpp"
#include "probes/tlb/levels.hpp"

#include <cstdio>
#include <sstream>

using namespace gpuprobe::probes;

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    std::vector<std::string> files;
    std::stringstream ss(arg.substr(eq + 1));
    for (std::string f; std::getline(ss, f, ',');)
      files.push_back(f);
    const auto a = find_tlb_levels(load_tlb_inputs(files));
    for (const bool cand : {false, true})
      for (const auto &L : cand ? a.candidates : a.levels) {
        const auto &f = L.structure.fit;
        std::printf(
            "%s %s %.0f x %.0f KiB (%s) +%.1f conf %.2f %s\n", arg.substr(0, eq).c_str(),
            cand ? "C" : "L", L.entries, L.coverage_bytes / 1024, to_string(L.bound).c_str(),
            L.miss_penalty_cycles, L.confidence,
            f.resolved
                ? (std::to_string(int(f.ways)) + "w x " + std::to_string(int(f.sets)) + "s").c_str()
                : "unresolved");
      }
  }
}
