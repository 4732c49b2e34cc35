#include "common/node_budget.hpp"
#include "common/error.hpp"
#include "common/non_copyable.hpp"
#include "common/process.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace gpuprobe {

namespace {
std::atomic<std::uint64_t> g_held_here{0}; // bytes of the budget this process's reservations hold
std::string token_path(const budget_config &c, std::uint64_t k) {
  return c.dir + "/gpuprobe-range-budget." + std::to_string(k);
}
// A budget file, created readable and writable by every user of the node (the driver's cap is the
// node's, whoever maps), never through a link (O_NOFOLLOW: /tmp is shared). -1 when unusable.
int open_budget_file(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd >= 0)
    (void)::fchmod(fd, 0666); // the umask's bits back (fails harmlessly on another user's file)
  return fd;
}
// The gate: held while tokens are counted or taken, so that two reservations never each hold part
// of what both need (neither waits on a part the other holds).
class gate : private non_copyable {
public:
  explicit gate(const budget_config &c)
      : fd_(open_budget_file(c.dir + "/gpuprobe-range-budget.gate")) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~gate() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

private:
  int fd_;
};
} // namespace

budget_config budget_config::from_env() {
  budget_config c;
  if (const char *v = std::getenv("GPUPROBE_NODE_RANGE_GIB"); v && *v) {
    char *end = nullptr;
    const unsigned long long gib = std::strtoull(v, &end, 10);
    if (*end != '\0')
      throw error(std::string("GPUPROBE_NODE_RANGE_GIB=") + v + ": not a whole number of GiB");
    c.total_bytes = gib << 30;
  }
  return c;
}

std::optional<node_budget> node_budget::try_reserve(std::uint64_t bytes, const budget_config &c) {
  const std::uint64_t need = c.tokens_for(bytes);
  if (need > c.tokens())
    throw error("a mapped range of " + std::to_string(bytes >> 30) +
                " GiB exceeds the node's budget of " + std::to_string(c.total_bytes >> 30) +
                " GiB (GPUPROBE_NODE_RANGE_GIB; the driver grants a node just under 1 TiB in all)");
  node_budget b;
  b.token_bytes_ = c.token_bytes;
  if (need == 0)
    return b;
  const gate g(c);
  if (!g.ok())
    return std::nullopt;
  for (std::uint64_t k = 0; k < c.tokens() && b.fds_.size() < need; ++k) {
    const int fd = open_budget_file(token_path(c, k));
    if (fd < 0)
      continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      b.fds_.push_back(fd);
      g_held_here += c.token_bytes; // counted as taken, so that release() gives back the same
    } else
      ::close(fd);
  }
  if (b.fds_.size() < need)
    return std::nullopt; // b's destructor gives back what it took
  return b;
}

node_budget node_budget::reserve(std::uint64_t bytes, const budget_config &c,
                                 const std::function<void(std::uint64_t)> &on_wait,
                                 unsigned poll_ms, bool *beside) {
  if (beside)
    *beside = false;
  if (c.total_bytes == 0 || c.token_bytes == 0)
    return {};
  {
    const gate g(c);
    if (!g.ok())
      return {}; // no budget files (a read-only DIR): map without a budget
  }
  for (bool told = false;; told = true) {
    if (auto b = try_reserve(bytes, c))
      return std::move(*b);
    if (g_held_here > 0) { // a holder never waits: another waiting holder would wait on it
      if (beside)
        *beside = true;
      return {};
    }
    if (!told && on_wait)
      on_wait(held_now(c));
    check_interrupted("waiting for the node's mapped-range budget");
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
}

std::uint64_t node_budget::held_here() { return g_held_here; }

std::uint64_t node_budget::held_now(const budget_config &c) {
  const gate g(c);
  std::uint64_t held = 0;
  for (std::uint64_t k = 0; k < c.tokens(); ++k) {
    const int fd = open_budget_file(token_path(c, k));
    if (fd < 0)
      continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
      held += c.token_bytes;
    ::close(fd); // a lock taken only to look is dropped with the descriptor
  }
  return held;
}

node_budget &node_budget::operator=(node_budget &&o) noexcept {
  if (this != &o) {
    release();
    fds_ = std::move(o.fds_);
    token_bytes_ = o.token_bytes_;
    o.fds_.clear();
  }
  return *this;
}

void node_budget::release() noexcept {
  g_held_here -= held_bytes();
  for (const int fd : fds_)
    ::close(fd);
  fds_.clear();
}

} // namespace gpuprobe
