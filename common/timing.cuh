#pragma once
// The one GPU timer: a pair of CUDA events owned for the timer's life (destroyed on every path,
// a throw included), timing launches on stream 0.
#include "common/cuda_check.cuh"
#include "common/non_copyable.hpp"

namespace gpuprobe {

class event_timer : private non_copyable {
public:
  event_timer() {
    GPUPROBE_CUDA_CHECK(cudaEventCreate(&e0_));
    GPUPROBE_CUDA_CHECK(cudaEventCreate(&e1_));
  }
  ~event_timer() {
    GPUPROBE_CUDA_CHECK_NOTHROW(cudaEventDestroy(e0_));
    GPUPROBE_CUDA_CHECK_NOTHROW(cudaEventDestroy(e1_));
  }

  // Milliseconds that `launch` (one or more kernel launches) takes on the device. Untimed work
  // queued before is finished first; the launch error is checked, then the execution error.
  template <class F> double ms(F &&launch) {
    GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
    GPUPROBE_CUDA_CHECK(cudaEventRecord(e0_));
    launch();
    GPUPROBE_CUDA_CHECK_LAUNCH();
    GPUPROBE_CUDA_CHECK(cudaEventRecord(e1_));
    GPUPROBE_CUDA_CHECK(cudaEventSynchronize(e1_));
    float t = 0;
    GPUPROBE_CUDA_CHECK(cudaEventElapsedTime(&t, e0_, e1_));
    return double(t);
  }

private:
  cudaEvent_t e0_{}, e1_{};
};

} // namespace gpuprobe
