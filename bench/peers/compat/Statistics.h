#pragma once
// Found before Ouroboros' own include/Statistics.h (bench/peers/CMakeLists.txt puts this folder
// first), so that its header compiles with CUDA 13 without touching the user's checkout:
// it uses std::cout without <iostream>, and cudaDeviceProp::clockRate, which CUDA 13 removed, in
// writeGPUInfo (a CSV writer the harness never calls), where it now reads 0.
#include <iostream>
#define clockRate major * 0
#include_next "Statistics.h"
#undef clockRate
