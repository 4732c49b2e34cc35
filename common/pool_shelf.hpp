#pragma once
// One large pool kept from the stage that made it to the next one that asks for the same (issue
// 48): in `gpuprobe run`, tune's last TLB-sized pool (a scattered-VMM array of most of the
// device's memory, tens of thousands of chunks) is what validate's first rows take, where each
// stage used to map and unmap its own. The policy alone, over any pool type, so that it is tested
// on the host; common/device_memory.hpp keeps device_pools with it (keepable_pool).
// The shelf holds at most one pool: a request for anything else drops it first, since two such
// pools do not fit in the device's memory together. Keeping is on only while a keeper is open.
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace gpuprobe {

template <class Pool, class Key> class pool_shelf {
public:
  // Keeping on. Returns whether this call turned it on (an inner keeper leaves it to the outer).
  bool open() {
    const std::lock_guard<std::mutex> lock(m_);
    return !std::exchange(open_, true);
  }
  // Keeping off; what is kept is dropped.
  void close() {
    std::unique_ptr<Pool> gone;
    {
      const std::lock_guard<std::mutex> lock(m_);
      open_ = false;
      gone = take_all();
    }
  }
  bool is_open() const {
    const std::lock_guard<std::mutex> lock(m_);
    return open_;
  }
  // The kept pool for `key`, taken off the shelf; nullptr when none matches, and then what was
  // kept is dropped (destroyed before this returns, so its memory is back for the caller's own).
  std::unique_ptr<Pool> take(const Key &key) {
    std::unique_ptr<Pool> gone;
    const std::lock_guard<std::mutex> lock(m_);
    if (key_ && *key_ == key)
      return take_all();
    gone = take_all();
    return nullptr;
  }
  // A pool its last user ended: kept while open (one at a time: an older one is dropped), else
  // destroyed.
  void give_back(const Key &key, std::unique_ptr<Pool> p) {
    std::unique_ptr<Pool> gone;
    const std::lock_guard<std::mutex> lock(m_);
    if (!open_)
      return; // p ends here
    gone = take_all();
    pool_ = std::move(p);
    key_ = key;
  }
  // Drops what is kept (keeping stays as it is).
  void drop() {
    std::unique_ptr<Pool> gone;
    const std::lock_guard<std::mutex> lock(m_);
    gone = take_all();
  }
  // The key of the pool kept now, if any.
  std::optional<Key> kept() const {
    const std::lock_guard<std::mutex> lock(m_);
    return key_;
  }

private:
  std::unique_ptr<Pool> take_all() {
    key_.reset();
    return std::move(pool_);
  }
  mutable std::mutex m_;
  bool open_ = false;
  std::unique_ptr<Pool> pool_;
  std::optional<Key> key_;
};

} // namespace gpuprobe
