#include "common/process.hpp"

#include "common/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char **environ;

namespace gpuprobe {

namespace {

// The running children, for the signal handler (async-signal-safe: a fixed table of atomics).
constexpr int k_slots = 256;
std::atomic<int> g_children[k_slots];
std::atomic<int> g_signal{0};
std::atomic<int> g_cleanup_scopes{0};

void remember(int pid) {
  for (auto &s : g_children) {
    int free_slot = 0;
    if (s.compare_exchange_strong(free_slot, pid))
      return;
  }
}
void forget(int pid) {
  for (auto &s : g_children) {
    int mine = pid;
    if (s.compare_exchange_strong(mine, 0))
      return;
  }
}

extern "C" void on_interrupt(int sig) {
  g_signal.store(sig);
  for (auto &s : g_children)
    if (const int pid = s.load(); pid > 0)
      ::kill(-pid, sig);              // its process group: the child and whatever it started
  if (g_cleanup_scopes.load() == 0) { // nothing to clean: end as the default action would
    std::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

int exit_code_of(int status) {
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<char *> c_argv(const std::vector<std::string> &argv) {
  std::vector<char *> v;
  for (const auto &a : argv)
    v.push_back(const_cast<char *>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

// posix_spawnp of argv in dir, stdout (and stderr when merged) to out_fd when >= 0.
int spawn(const std::vector<std::string> &argv, const std::string &dir, int out_fd,
          bool merge_stderr, bool quiet_stderr, const std::vector<std::string> &env = {},
          const std::string &stderr_file = "") {
  if (argv.empty() || argv[0].empty())
    throw error("no program to run");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!dir.empty())
    posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    if (merge_stderr)
      posix_spawn_file_actions_adddup2(&fa, out_fd, STDERR_FILENO);
  }
  if (quiet_stderr && !merge_stderr)
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  else if (!stderr_file.empty() && !merge_stderr)
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, stderr_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  auto args = c_argv(argv);
  std::vector<std::string> env_text; // this environment, with `env`'s names replaced
  for (char **e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto name = kv.substr(0, kv.find('=') + 1);
    if (std::none_of(env.begin(), env.end(),
                     [&](const std::string &x) { return x.rfind(name, 0) == 0; }))
      env_text.push_back(kv);
  }
  env_text.insert(env_text.end(), env.begin(), env.end());
  auto envp = c_argv(env_text);
  // Its own process group, so an interruption reaches what it starts too (a plotter's workers,
  // a stage's children); this process passes SIGINT on, since a terminal's Ctrl-C no longer does.
  // The interruptions wait, in this thread, until the child is remembered: a child that ran before
  // its parent noted it (a loaded machine) missed the signal and ran on, orphaned. The child starts
  // with the mask and the default actions this process had.
  sigset_t interrupts, before;
  sigemptyset(&interrupts);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&interrupts, sig);
  pthread_sigmask(SIG_BLOCK, &interrupts, &before);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &before);
  posix_spawnattr_setsigdefault(&attr, &interrupts);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0)
    remember(pid);
  pthread_sigmask(SIG_SETMASK, &before, nullptr); // a pending interruption reaches it now
  if (rc != 0)
    throw error("cannot start '" + argv[0] + "': " + std::strerror(rc));
  return pid;
}

// Whether process group `pgid` holds a process that is not a zombie (/proc: a zombie whose parent
// died waits for init to reap it, and kill() on its group still succeeds).
bool group_runs(int pgid) {
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream in(e.path() / "stat");
    std::string text;
    std::getline(in, text);
    const auto close = text.rfind(')'); // the command may hold spaces and parentheses
    if (close == std::string::npos)
      continue;
    std::istringstream rest(text.substr(close + 1));
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (rest >> state >> ppid >> pgrp && pgrp == pgid && state != 'Z')
      return true;
  }
  return false;
}

// Waits for pid. Once interrupted, the signal is passed to its group again every 250 ms while
// the child runs (a shell defers SIGINT while it forks: the command it then started missed the
// signal and ran on, the shell waiting for it), and after 30 s its group is killed; what is left
// of the group when the child has ended gets the signal until the group is gone (SIGKILL at 2 s).
int wait_pid(int pid) {
  int status = 0;
  int waited_ms = 0;
  for (;;) {
    const int sig = g_signal.load();
    const int r = ::waitpid(pid, &status, sig ? WNOHANG : 0);
    if (r == pid || (r < 0 && errno != EINTR))
      break;
    if (sig && r == 0) {
      if (waited_ms >= 30000) {
        ::kill(-pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      ::usleep(50 * 1000);
      waited_ms += 50;
      if (waited_ms % 250 == 0)
        ::kill(-pid, sig);
    }
  }
  forget(pid);
  // What is left of its group (a command its shell forked as the signal came, which missed it)
  // gets the signal again every 50 ms while the group exists, and SIGKILL after 2 s: an orphan
  // holding our pipe would otherwise run on (a loaded CI machine: a plotter's sleep ran its 29 s).
  if (const int sig = g_signal.load())
    for (int ms = 0; group_runs(pid) && ms <= 2000; ms += 50) {
      ::kill(-pid, ms < 2000 ? sig : SIGKILL);
      ::usleep(50 * 1000);
    }
  return status;
}

} // namespace

child_result run_child(const std::vector<std::string> &argv, const child_options &o) {
  child_result r;
  int fds[2] = {-1, -1};
  if (o.capture && ::pipe2(fds, O_CLOEXEC) != 0)
    throw error(std::string("cannot make a pipe: ") + std::strerror(errno));
  int pid = -1;
  try {
    pid = spawn(argv, o.dir, o.capture ? fds[1] : -1, o.merge_stderr, o.quiet_stderr, o.env,
                o.stderr_file);
  } catch (...) {
    if (o.capture)
      ::close(fds[0]), ::close(fds[1]);
    throw;
  }
  if (o.capture) {
    ::close(fds[1]);
    char buf[4096];
    for (;;) {
      // Once interrupted, the output is no longer waited for: a command the child started that
      // the signal missed may hold the pipe open for as long as it runs (wait_pid ends it).
      if (g_signal.load())
        break;
      pollfd p = {fds[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) // nothing yet, or a signal came (checked above)
        continue;
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      const std::string chunk(buf, std::size_t(n));
      r.output += chunk;
      if (o.on_output)
        o.on_output(chunk);
    }
    ::close(fds[0]);
  }
  const int status = wait_pid(pid);
  r.exit_code = exit_code_of(status);
  r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return r;
}

spawned_child spawn_child(const std::vector<std::string> &argv, const std::string &dir,
                          const std::vector<std::string> &env) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw error(std::string("cannot make a pipe: ") + std::strerror(errno));
  spawned_child c;
  try {
    c.pid = spawn(argv, dir, fds[1], true, false, env);
  } catch (...) {
    ::close(fds[0]), ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  c.out_fd = fds[0];
  return c;
}

int wait_child(spawned_child &c) {
  if (c.out_fd >= 0)
    ::close(c.out_fd), c.out_fd = -1;
  const int code = c.pid > 0 ? exit_code_of(wait_pid(c.pid)) : -1;
  c.pid = -1;
  return code;
}

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

void install_interrupt_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; // no SA_RESTART: a blocking read returns, and the loop checks
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
}

int interrupted_by() { return g_signal.load(); }

void check_interrupted(const std::string &during) {
  if (const int sig = g_signal.load())
    throw interrupted(std::string("interrupted (") + ::strsignal(sig) + ") during " + during, sig);
}

cleanup_scope::cleanup_scope() { ++g_cleanup_scopes; }
cleanup_scope::~cleanup_scope() { --g_cleanup_scopes; }

} // namespace gpuprobe
