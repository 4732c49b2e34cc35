#include "probes/tlb/forward.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace gpuprobe::probes::tlb {

namespace {

// The share of visits to a set of `n` tags, visited in a cycle, that miss with `ways` ways.
double set_miss(std::uint64_t n, std::uint64_t ways, replacement r) {
  if (n <= ways)
    return 0;
  if (r == replacement::lru)
    return 1; // a cycle longer than the set evicts each tag before its next visit
  // Random: a tag survives each of the (n - 1) p misses between its visits with 1 - 1/W. The
  // fixed point is remembered per (n, ways): a whole-sweep fit asks for the same ones often.
  // A direct-mapped table of 8192 (key + 1, value) pairs: a lookup is one load, no hashing node.
  struct remembered {
    std::uint64_t key_plus_1 = 0;
    double miss = 0;
  };
  thread_local std::array<remembered, 8192> known{};
  const std::uint64_t key = n * 128 + std::min<std::uint64_t>(ways, 127);
  remembered &slot = known[(key * 0x9E3779B97F4A7C15ull) >> 51];
  if (ways < 128 && slot.key_plus_1 == key + 1)
    return slot.miss;
  // h = g(h) = (1 - 1/W)^((n - 1)(1 - h)) by Newton's method from h = 0: g is convex and h = 1 is
  // always a root, so the steps rise monotonically to the smaller root, the hit rate (in a few
  // steps, where iterating g took up to 200 pow calls).
  const double k = double(n - 1) * -std::log1p(-1.0 / double(ways)); // g(h) = exp(-k (1 - h))
  double h = 0;
  for (int i = 0; i < 100; ++i) {
    const double g = std::exp(-k * (1 - h));
    const double step = (g - h) / (1 - k * g); // f(h) = g - h, f' = k g - 1
    h += step;
    if (std::fabs(step) < 1e-14)
      break;
  }
  if (ways < 128)
    slot = {key + 1, 1 - h};
  return 1 - h;
}

// How many tags each set holds when tags t = k * r (k < T) are indexed modulo `sets`: the used
// sets (sets / gcd) share T round robin.
double modulo_miss(const cache_level &L, std::uint64_t r, std::uint64_t T) {
  const std::uint64_t g = std::min(r, L.sets); // powers of two: gcd(r, sets)
  const std::uint64_t used = L.sets / g;
  const std::uint64_t base = T / used, extra = T % used; // `extra` sets hold base + 1
  const double m = double(extra) * double(base + 1) * set_miss(base + 1, L.ways, L.repl) +
                   double(used - extra) * double(base) * set_miss(base, L.ways, L.repl);
  return m / double(T);
}

// The same with an XOR index, set = (t ^ t >> b) mod 2^b, b = log2 sets, for tags t = k * 2^j:
// where j < b, writing k = q 2^(b-j) + u, a tag's set is (u << j) ^ (q mod 2^b), and each block of
// q takes every residue mod 2^j once: the sets fill evenly (as consecutive tags do); where j >= b
// the low bits are zero and the set is (k << (j - b)) mod 2^b, the modulo case for r / 2^b.
double xor_miss(const cache_level &L, std::uint64_t r, std::uint64_t T) {
  return r < L.sets ? modulo_miss(L, 1, T) : modulo_miss(L, r / L.sets, T);
}

} // namespace

const char *replacement_name(replacement r) { return r == replacement::lru ? "lru" : "random"; }

const char *index_name(const cache_level &L) {
  return L.sets <= 1 ? "fully associative" : L.xor_index ? "xor" : "modulo";
}

double miss_share(const cache_level &L, std::uint64_t stride, std::uint64_t hops) {
  if (hops == 0)
    return 0;
  const std::uint64_t C = L.coverage_bytes;
  // Tags touched: a tag every hop (stride >= C, tags r = stride / C apart), or consecutive tags
  // each visited C / stride times in a row, of which only the first can miss.
  const bool wide = stride >= C;
  const std::uint64_t r = wide ? stride / C : 1;
  const std::uint64_t T = wide ? hops : (hops * stride + C - 1) / C;
  const std::uint64_t sector = L.sector_bytes ? std::min(L.sector_bytes, C) : C;
  const double first_visits = stride >= sector ? 1.0 : double(stride) / double(sector);
  if (T <= L.ways)
    return 0;
  if (T > 64 * L.entries() && L.repl == replacement::lru)
    return first_visits; // every set far past its ways
  const double m = L.xor_index && L.sets > 1 ? xor_miss(L, r, T) : modulo_miss(L, r, T);
  return first_visits * m;
}

std::uint64_t first_miss_tags(const cache_level &L, std::uint64_t stride) {
  const std::uint64_t C = L.coverage_bytes;
  const std::uint64_t per_tag = stride >= C ? 1 : C / stride; // hops a tag takes
  std::uint64_t lo = 1, hi = 64 * L.entries() + 1;            // tags
  if (miss_share(L, stride, hi * per_tag) <= 0)
    return 0;
  while (lo < hi) { // misses grow with the tags a lap touches: the first that misses
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (miss_share(L, stride, mid * per_tag) > 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

} // namespace gpuprobe::probes::tlb
