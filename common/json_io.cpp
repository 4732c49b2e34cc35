#include "common/json_io.hpp"

#include "common/build_info.hpp"
#include "common/error.hpp"
#include "common/json_depth.hpp"
#include "common/outputs.hpp"
#include "common/units.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace gpuprobe {

namespace {
void forget_read(const std::string &path); // below: a file a read_once_scope read, dropped
} // namespace

void write_text_atomic(const std::string &path, const std::string &text) {
  forget_read(path); // read again after this rewrite (its freed inode may recur, with its size)
  if (path.empty())
    throw error("cannot write '': give a file name");
  refuse_non_regular_target(path); // rename() would replace a device, a FIFO or a link
  const std::filesystem::path p(path);
  remove_stale_temporaries(p.has_parent_path() ? p.parent_path().string() : ".",
                           p.filename().string() + ".tmp."); // of writers that were killed
  // Created exclusively, never through a link: something planted at the name is passed over.
  const std::string base = path + ".tmp." + std::to_string(::getpid());
  std::string tmp = base;
  int fd = create_exclusive(tmp);
  for (int k = 1; fd < 0 && errno == EEXIST && k < 64; ++k)
    fd = create_exclusive(tmp = base + "." + std::to_string(k));
  if (fd < 0)
    throw error("cannot write '" + terminal_text(path) + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw error("cannot write '" + terminal_text(path) + "': " + why);
    }
    done += std::size_t(n);
  }
  if (::close(fd) != 0) { // a full disk may say so only here
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw error("cannot write '" + terminal_text(path) + "': " + why);
  }
  try {
    refuse_non_regular_target(path); // planted while this wrote: still not replaced
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw error("cannot write '" + terminal_text(path) + "': " + why);
  }
}

void write_json_atomic(const std::string &path, const json &doc) {
  write_text_atomic(path, doc.dump(2) + "\n");
}

void check_input_file(const std::string &path, std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(path, ec); // follows links
  if (ec && ec.value() == ELOOP)
    throw error("cannot read '" + path + "': a loop of symbolic links");
  if (fs::is_directory(st))
    throw error("'" + path + "' is a directory, not a file");
  if (!fs::exists(st))
    throw error("cannot read '" + path + "': no such file");
  if (!fs::is_regular_file(st))
    throw error("cannot read '" + path + "': not a regular file (a device, pipe or socket)");
  if (const auto size = fs::file_size(path, ec); !ec && size > max_bytes)
    throw error("cannot read '" + path + "': " + format_bytes(double(size)) +
                ", more than gpuprobe reads here (" + format_bytes(double(max_bytes)) + ")");
}

namespace {

// A file's identity: (device, inode), size, modification time (ns).
using file_id = std::tuple<std::pair<std::uint64_t, std::uint64_t>, std::uintmax_t, std::int64_t>;

// The files a read_once_scope has read: by canonical path, with the identity they had and their
// text (and JSON, once parsed).
struct read_file {
  file_id id;
  std::string text;
  std::optional<json> doc;
};
struct read_cache {
  std::mutex m;
  int depth = 0;
  std::size_t disk_reads = 0;
  std::map<std::string, read_file> files;
};
read_cache &cache() {
  static read_cache c;
  return c;
}

// The file's identity where it can be had (stat follows links, as the reader does).
std::optional<file_id> identity_of(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return std::nullopt;
  return std::tuple{std::pair{std::uint64_t(st.st_dev), std::uint64_t(st.st_ino)},
                    std::uintmax_t(st.st_size),
                    std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string read_from_disk(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw error("cannot read '" + path + "': " + std::strerror(errno));
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw error("'" + path + "' is empty");
  std::lock_guard lock(cache().m);
  ++cache().disk_reads;
  return text;
}

// The key `path` is cached under (its canonical path) and its identity: none outside a scope.
struct cache_key {
  std::string path;
  file_id id;
};
std::optional<cache_key> cache_id(const std::string &path) {
  {
    std::lock_guard lock(cache().m);
    if (cache().depth == 0)
      return std::nullopt;
  }
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  const auto id = identity_of(path);
  if (ec || !id)
    return std::nullopt;
  return cache_key{canonical.string(), *id};
}

// The entry of `k`, read from the disk where it was not read yet or has changed since. Called
// under `lock`, which it lets go while it reads.
read_file &entry(const cache_key &k, const std::string &path, std::unique_lock<std::mutex> &lock) {
  if (const auto it = cache().files.find(k.path);
      it != cache().files.end() && it->second.id == k.id)
    return it->second;
  lock.unlock(); // the disk read without the lock (it takes it to count)
  std::string text = read_from_disk(path);
  lock.lock();
  return cache().files[k.path] = {k.id, std::move(text), std::nullopt};
}

void forget_read(const std::string &path) {
  {
    std::lock_guard lock(cache().m);
    if (cache().files.empty()) // outside a scope it always is: no path to resolve
      return;
  }
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  std::lock_guard lock(cache().m);
  if (ec)
    cache().files.clear();
  else
    cache().files.erase(canonical.string());
}

} // namespace

read_once_scope::read_once_scope() {
  std::lock_guard lock(cache().m);
  ++cache().depth;
}
read_once_scope::~read_once_scope() {
  std::lock_guard lock(cache().m);
  if (--cache().depth == 0)
    cache().files.clear();
}
std::size_t reads_from_disk() {
  std::lock_guard lock(cache().m);
  return cache().disk_reads;
}

std::string read_text_file(const std::string &path) {
  check_input_file(path);
  const auto k = cache_id(path);
  if (!k)
    return read_from_disk(path);
  std::unique_lock lock(cache().m);
  return entry(*k, path, lock).text;
}

json parse_json_text(const std::string &text, const std::string &source) {
  if (const auto at = json_too_deep_at(text, k_max_json_depth)) // before any value is built
    throw error("'" + source + "' is nested deeper than " + std::to_string(k_max_json_depth) +
                " levels (at byte " + std::to_string(at) + "): not a gpuprobe file");
  try {
    return json::parse(text);
  } catch (const json::parse_error &e) {
    throw error("'" + source + "' is not JSON (" +
                (e.byte <= 1 ? std::string("it does not start as JSON does")
                             : "broken at byte " + std::to_string(e.byte)) +
                ")");
  } catch (const json::exception &e) { // a number past double's range, ...
    throw error("'" + source + "' is not JSON gpuprobe reads (" + e.what() + ")");
  }
}

json read_json_file(const std::string &path) {
  check_input_file(path);
  const auto k = cache_id(path);
  if (!k)
    return parse_json_text(read_from_disk(path), path);
  std::unique_lock lock(cache().m);
  read_file &f = entry(*k, path, lock);
  if (!f.doc) // parsed once; a file that is not JSON throws here each time, as before
    f.doc = parse_json_text(f.text, path);
  return *f.doc;
}

void require_schema(const json &doc, const std::string &family, int max_version,
                    const std::string &path) {
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
    throw error("'" + path + "' has no \"schema\" field: not a gpuprobe file");
  const std::string s = doc["schema"].get<std::string>();
  const std::string prefix = family + "/";
  if (s.rfind(prefix, 0) != 0)
    throw error("'" + path + "' has schema '" + s + "', expected " + family + "/N");
  int version = 0;
  try {
    version = std::stoi(s.substr(prefix.size()));
  } catch (...) {
    throw error("'" + path + "' has a malformed schema '" + s + "'");
  }
  if (version < 1 || version > max_version)
    throw error("'" + path + "' has schema version " + std::to_string(version) +
                ", this gpuprobe reads up to " + family + "/" + std::to_string(max_version));
}

json run_metadata(int argc, const char *const *argv, unsigned long long seed) {
  json args = json::array();
  for (int i = 0; i < argc; ++i)
    args.push_back(argv[i]);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return json{{"tool", "gpuprobe"},
              {"version", GPUPROBE_VERSION},
              {"git_commit", git_commit()},
              {"argv", args},
              {"seed", seed},
              {"created_utc", stamp}};
}

} // namespace gpuprobe
