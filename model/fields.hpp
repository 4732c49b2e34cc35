#pragma once
// How a typed model reads and writes its JSON file: a field is taken out of the document (what is
// left is the model's `detail`, written back as read) and put back in. A block's keys are spelt
// once, in its fields() (read_block / write_block, below), which its reader and writer share.
// Host-only, header-only.
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprobe::model {

using nlohmann::json;

// A value no measurement can give (a negative count, a page that is no power of two, ...): the
// readers refuse it, so it is never drawn or tuned as a finding.
struct impossible_value : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A part read of another kind than its reader takes, in one line: `WHERE: "KEY" is TYPE, not WANT`
// ("a string", "an object", ...).
inline error kind_error(const std::string &where, const std::string &key, const json &v,
                        const char *want) {
  return error(where + ": \"" + key + "\" is " + v.type_name() + ", not " + want);
}

// doc[key] where it is there and not null, else nullptr; of another kind than `is` says, a
// kind_error. The readers of a file's parts that take absent and null alike (file_head,
// run_record).
inline const json *part_of_kind(const json &doc, const char *key, bool (json::*is)() const noexcept,
                                const char *want, const std::string &where) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null())
    return nullptr;
  if (!((*it).*is)())
    throw kind_error(where, key, *it, want);
  return &*it;
}

// The same, for a key renamed in a later version of its file: `key`, else its name `old` in files
// of an earlier version.
inline const json *part_of_kind(const json &doc, const char *key, const char *old,
                                bool (json::*is)() const noexcept, const char *want,
                                const std::string &where) {
  if (const json *p = part_of_kind(doc, key, is, want, where))
    return p;
  return part_of_kind(doc, old, is, want, where);
}

// A block a reader takes: false where it is null (nothing known); of another kind than an object,
// one gpuprobe::error: "WHAT are TYPE, not an object".
inline bool object_or_null(const json &block, const std::string &what) {
  if (block.is_null())
    return false;
  if (!block.is_object())
    throw error(what + " are " + std::string(block.type_name()) + ", not an object");
  return true;
}

// A block a probe wrote for itself (a verdict, an analysis): `key`'s value where the block is an
// object that has it, else `otherwise` (a block not made yet is null).
inline json part_or(const json &block, const char *key, const json &otherwise) {
  if (!block.is_object())
    return otherwise;
  const auto it = block.find(key);
  return it != block.end() ? *it : otherwise;
}
inline std::string words_of(const json &block, const char *key) {
  const json v = part_or(block, key, json());
  return v.is_string() ? v.get<std::string>() : std::string();
}

// A block fields are taken from is an object: a number or list in its place is refused (its
// leftover `detail` would be written back as something no writer can add keys to).
inline void require_object(const json &doc, const char *key) {
  if (!doc.is_object())
    throw impossible_value(std::string("the block holding \"") + key + "\" is " +
                           std::string(doc.type_name()) + ", not an object");
}

// `key` of `doc` into `v` when it is there (else `v` keeps its default), and out of `doc`. A null
// (a value not known, as "sets" of an unresolved level) stays in `doc`: written back as it was.
template <class T> void take(json &doc, const char *key, T &v) {
  require_object(doc, key);
  if (const auto it = doc.find(key); it != doc.end() && !it->is_null()) {
    v = it->template get<T>();
    doc.erase(it);
  }
}
template <class T> void take(json &doc, const char *key, std::optional<T> &v) {
  require_object(doc, key);
  if (const auto it = doc.find(key); it != doc.end() && !it->is_null()) {
    v = it->template get<T>();
    doc.erase(it);
  }
}
// A key a file of this kind always has: missing is an error (nlohmann's out_of_range).
template <class T> void take_required(json &doc, const char *key, T &v) {
  v = doc.at(key).template get<T>();
  doc.erase(key);
}

// A key renamed in a later version of its file: where `doc` has the name this build writes, the
// old one is left alone; else a value under the old name moves to the new name (read, and written
// back, as the new). Files of an earlier version are so read as they were meant.
inline void take_old_name(json &doc, const char *key, const char *old) {
  if (!doc.is_object() || doc.contains(key)) // not an object: the take that follows refuses it
    return;
  if (const auto it = doc.find(old); it != doc.end()) {
    json v = std::move(*it);
    doc.erase(it);
    doc[key] = std::move(v);
  }
}

// A block of `doc` read by `from` into `v` (a list: each element), and out of `doc`; absent: `v`
// keeps its default (an optional list stays empty).
template <class T, class F> void take_with(json &doc, const char *key, T &v, F &&from) {
  require_object(doc, key);
  if (const auto it = doc.find(key); it != doc.end()) {
    v = from(*it);
    doc.erase(it);
  }
}
// The most entries a list in a gpuprobe file may hold (a sweep's points, a stage's rows); a
// reader refuses more in one line. Each list kind may set a lower bound of its own.
inline constexpr std::size_t k_max_list_entries = 1u << 20;

template <class T, class F>
void take_list(json &doc, const char *key, std::vector<T> &v, F &&from,
               std::size_t max_entries = k_max_list_entries) {
  take_with(doc, key, v, [&](const json &a) {
    if (a.is_array() && a.size() > max_entries) // bounded: a hostile file cannot stall a reader
      throw impossible_value(std::string(key) + " has " + std::to_string(a.size()) +
                             " entries, more than gpuprobe reads (" + std::to_string(max_entries) +
                             ")");
    std::vector<T> out;
    for (const auto &e : a)
      out.push_back(from(e));
    return out;
  });
}
template <class T, class F>
void take_list(json &doc, const char *key, std::optional<std::vector<T>> &v, F &&from,
               std::size_t max_entries = k_max_list_entries) {
  if (doc.contains(key))
    take_list(doc, key, v.emplace(), from, max_entries);
}
// A list written with each element's own to_json.
template <class T> json list_json(const std::vector<T> &v) {
  json a = json::array();
  for (const auto &e : v)
    a.push_back(to_json(e));
  return a;
}

// A file's "device" block, taken as every reader of it reads it: an object whose name, UUID and
// driver are text and whose counts and clocks are numbers (a UUID of 7 is refused here, not
// thrown by a later reader as a library error).
inline void take_device(json &doc, json &device) {
  take(doc, "device", device);
  if (device.is_null())
    return;
  if (!device.is_object())
    throw impossible_value("device is " + std::string(device.type_name()) + ", not an object");
  for (const char *k : {"name", "uuid", "driver_release", "pci_bus_id"})
    if (device.contains(k) && !device[k].is_string())
      throw impossible_value(std::string("device.") + k + " is not text");
  for (const char *k : {"sm_count", "sm_clock_mhz_seen", "ordinal", "max_threads_per_sm",
                        "l2_bytes", "memory_bytes"})
    if (device.contains(k) && !device[k].is_number())
      throw impossible_value(std::string("device.") + k + " is not a number");
}

template <class T> void put(json &doc, const char *key, const T &v) { doc[key] = v; }
template <class T> void put(json &doc, const char *key, const std::optional<T> &v) {
  if (v)
    doc[key] = *v;
}

// A block's fields declared once, for its reader and its writer. A block type S declares
//   template <class F> void fields(S &s, F &f)
// beside it, naming each member with its key: f.field(key, member) (absent: the default);
// f.required(key, member) (a key every file of the kind has); f.text(key, member) (a string, not
// written while empty); f.block(key, member, from) (an optional block read by `from`, written by
// its to_json); f.whole(key, member, from) (a block every file of the kind has, so read);
// f.list(key, member, from[, most]) (a list, each element so; at most `most` entries);
// f.required_list(key, member, from) (a list every file of the kind has); f.device(member) (a
// file's "device" block, take_device's checks); f.if_set(key, member) (written only where not
// the member's default, so files that never had it read as before); f.named(key, member, parse)
// (an enum every file has, written by its to_string, read by `parse`); f.derived(key, value)
// (written from other fields, not read back: the reader drops it). A key renamed in a later version
// is moved to its new name (take_old_name) before read_block. read_block takes them out of a JSON
// block, the rest staying in s.detail; write_block puts them back over s.detail.
struct field_reader {
  json &doc;
  template <class T> void field(const char *k, T &v) { take(doc, k, v); }
  template <class T> void required(const char *k, T &v) { take_required(doc, k, v); }
  void text(const char *k, std::string &v) { take(doc, k, v); }
  template <class T, class F> void block(const char *k, std::optional<T> &v, F &&from) {
    take_with(doc, k, v, from);
  }
  template <class T, class F> void whole(const char *k, T &v, F &&from) {
    v = from(doc.at(k));
    doc.erase(k);
  }
  template <class T, class F>
  void list(const char *k, std::vector<T> &v, F &&from, std::size_t most = k_max_list_entries) {
    take_list(doc, k, v, from, most);
  }
  void device(json &v) { take_device(doc, v); }
  template <class T, class F>
  void list(const char *k, std::optional<std::vector<T>> &v, F &&from) {
    take_list(doc, k, v, from);
  }
  // A list every file of the kind has: missing is an error (nlohmann's out_of_range).
  template <class T, class F> void required_list(const char *k, std::vector<T> &v, F &&from) {
    static_cast<void>(doc.at(k));
    take_list(doc, k, v, from);
  }
  template <class T> void if_set(const char *k, T &v) { take(doc, k, v); }
  template <class T, class P> void named(const char *k, T &v, P &&parse) {
    v = parse(doc.at(k).template get<std::string>());
    doc.erase(k);
  }
  template <class T> void derived(const char *k, const T &) {
    require_object(doc, k);
    doc.erase(k);
  }
};
struct field_writer {
  json &doc;
  template <class T> void field(const char *k, const T &v) { put(doc, k, v); }
  template <class T> void required(const char *k, const T &v) { put(doc, k, v); }
  void text(const char *k, const std::string &v) {
    if (!v.empty())
      put(doc, k, v);
  }
  template <class T, class F> void block(const char *k, const std::optional<T> &v, F &&) {
    if (v)
      doc[k] = to_json(*v);
  }
  template <class T, class F> void whole(const char *k, const T &v, F &&) { doc[k] = to_json(v); }
  template <class T, class F>
  void list(const char *k, const std::vector<T> &v, F &&, std::size_t = 0) {
    doc[k] = list_json(v);
  }
  void device(const json &v) { put(doc, "device", v); }
  template <class T, class F>
  void list(const char *k, const std::optional<std::vector<T>> &v, F &&) {
    if (v)
      doc[k] = list_json(*v);
  }
  template <class T, class F> void required_list(const char *k, const std::vector<T> &v, F &&) {
    doc[k] = list_json(v);
  }
  template <class T> void if_set(const char *k, const T &v) {
    if (v != T{})
      put(doc, k, v);
  }
  template <class T, class P> void named(const char *k, const T &v, P &&) {
    put(doc, k, to_string(v));
  }
  template <class T> void derived(const char *k, const T &v) { put(doc, k, v); }
};
// A block whose keys its fields() does not name are kept in the member `rest` (most blocks:
// `detail`), written back as read under the named ones. The block is taken by value: a caller
// that made its own copy (to rename a version's keys) moves it in.
template <class S> S read_with_rest(json j, json S::*rest) {
  S s;
  field_reader f{j};
  fields(s, f);
  s.*rest = std::move(j);
  return s;
}
template <class S> json write_with_rest(const S &s, json S::*rest) {
  json j = s.*rest;
  field_writer f{j};
  fields(const_cast<S &>(s), f); // fields() names the members; the writer only reads them
  return j;
}
template <class S> S read_block(json in) { return read_with_rest(std::move(in), &S::detail); }
// read_block, then `check(s)`: the block's own refusals of what no measurement can give.
template <class S, class C> S read_block(json in, C &&check) {
  S s = read_block<S>(std::move(in));
  check(s);
  return s;
}
template <class S> json write_block(const S &s) { return write_with_rest(s, &S::detail); }
// A record (no `detail`: what its fields() does not name is not kept) read and written by them.
template <class S> S read_record(const json &in) {
  json j = in;
  S s;
  field_reader f{j};
  fields(s, f);
  return s;
}
template <class S> json write_record(const S &s) {
  json j = json::object();
  field_writer f{j};
  fields(const_cast<S &>(s), f); // fields() names the members; the writer only reads them
  return j;
}

// A probe's result document, its block read and written by the result type's fields() (the
// envelope, device and meta, around it): a missing or mistyped key is one gpuprobe::error,
// "PROBE result: ...".
template <class R>
R read_result(const json &doc, const std::string &probe, const std::string &key) {
  try {
    result_envelope env;
    const json &body = result_body(doc, probe, key, env);
    R r = read_record<R>(body);
    static_cast<result_envelope &>(r) = std::move(env);
    return r;
  } catch (const json::exception &e) {
    throw error(probe + " result: " + e.what());
  } catch (const impossible_value &e) {
    throw error(probe + " result: " + e.what());
  }
}
template <class R> json write_result(const R &r, const std::string &probe, const std::string &key) {
  return result_document(probe, r, key, write_record(r));
}

// Bounds no GPU comes near: a reader refuses more, so a hostile file cannot make a later stage
// allocate per SM id or draw per level without end (an SM id of 10^9 took 24 GB; 10^5 levels 51 s).
inline constexpr int k_max_sm_count = 4096; // SM ids are 0 .. k_max_sm_count - 1 (H100: 132)
inline constexpr std::size_t k_max_tlb_levels = 16; // levels, and candidates, of one hierarchy

// Every SM id of `groups` is in 0 .. limit - 1 (the device's SM count where known, else
// k_max_sm_count); `what` names the groups in the refusal ("L2 sharing group").
inline void check_group_sm_ids(const std::vector<std::vector<int>> &groups, double limit,
                               const std::string &what) {
  for (const auto &g : groups)
    for (const int sm : g)
      if (sm < 0 || sm >= limit)
        throw impossible_value(what + " SM id " + std::to_string(sm) + " is not in 0.." +
                               std::to_string(static_cast<long long>(limit) - 1));
}

// A count or size: finite and > 0 (`zero_ok`: >= 0).
inline void check_positive(const char *what, double v, bool zero_ok = false) {
  if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0))
    throw impossible_value(std::string(what) + " is " + json(v).dump() + ", not a finite " +
                           (zero_ok ? "non-negative" : "positive") + " number");
}
template <class T>
void check_positive(const char *what, const std::optional<T> &v, bool zero_ok = false) {
  if (v)
    check_positive(what, double(*v), zero_ok);
}

// A file of family `f` read by `read()` after its schema check (another family or a newer version
// is refused); a missing or mistyped key becomes one line naming `source` and the `kind` of file.
template <class F>
auto read_file_of(const json &doc, const schema::family &f, const std::string &source,
                  const char *kind, F &&read) {
  require_schema(doc, f, source);
  try {
    return read();
  } catch (const json::exception &e) {
    throw error("'" + source + "': malformed " + kind + " (" + std::string(e.what()) + ")");
  } catch (const impossible_value &e) {
    throw error("'" + source + "': impossible " + kind + " (" + std::string(e.what()) + ")");
  }
}

} // namespace gpuprobe::model
