// What gpuprobe was built from: recorded in every JSON file it writes.
#pragma once

namespace gpuprobe {

// The git commit of the build (12 hex digits, "-dirty" when tracked files differed from it,
// "unknown" outside a git checkout), taken when the binary was built.
const char *git_commit();

} // namespace gpuprobe
