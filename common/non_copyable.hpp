#pragma once
// A base for an object that owns something (a device allocation, a lock, a mapping, a scope): it
// is neither copied nor assigned, so two owners never release one thing twice.
namespace gpuprobe {

class non_copyable {
protected:
  non_copyable() = default;
  ~non_copyable() = default;

public:
  non_copyable(const non_copyable &) = delete;
  non_copyable &operator=(const non_copyable &) = delete;
};

} // namespace gpuprobe
