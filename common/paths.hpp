#pragma once
// Inputs are never outputs: a command's --out may not be one of its inputs, nor a folder that
// holds one (`analyze tlb --input d/raw/tlb.json --out d/raw/tlb.json` once erased the sweep).
// Paths are compared as the file system resolves them (links, "..", "./"). Host-only.
#include <string>
#include <vector>

namespace gpuprobe {

// True when `inner` is `outer` or lies below it (both resolved; neither need exist).
bool same_or_inside(const std::string &inner, const std::string &outer);

// Throws gpuprobe::error "COMMAND: --out 'X' is its input 'Y' ..." or "... holds its input ...".
void refuse_output_over_inputs(const std::string &command, const std::string &out,
                               const std::vector<std::string> &inputs);

} // namespace gpuprobe
