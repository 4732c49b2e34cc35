// The shelf that keeps one TLB-sized pool from tune to validate, on generated
// sequences of what the stages do: a pool is taken exactly when one kept has the same key; a
// request for anything else frees what is kept before it returns (two such pools never live at
// once on the shelf's account); nothing is kept while keeping is off; an inner keeper leaves
// keeping to the outer one. Checked against a plain model of the same rules, with every pool's
// construction and destruction counted.
#include "common/pool_shelf.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <random>

namespace {

struct key {
  int kind = 0, bytes = 0;
  bool operator==(const key &o) const { return kind == o.kind && bytes == o.bytes; }
};

int g_live = 0; // pools alive now
struct fake_pool {
  explicit fake_pool(key k) : made_as(k) { ++g_live; }
  ~fake_pool() { --g_live; }
  key made_as;
};

} // namespace

TEST(PoolShelf, APoolIsTakenExactlyWhenItsKeyIsAskedForAndFreedBeforeAnythingElse) {
  std::mt19937 rng(48);
  for (int trial = 0; trial < 300; ++trial) {
    g_live = 0;
    {
      gpuprobe::pool_shelf<fake_pool, key> shelf;
      bool has = false; // whether the shelf should hold a pool, and its key
      key model;
      bool open = false;
      int made = 0, reused = 0;
      for (int step = 0; step < 60; ++step) {
        const key k{int(rng() % 2), int(rng() % 3)};
        switch (rng() % 8) {
        case 0: { // a keeper starts: only the first turns keeping on
          const bool turned = shelf.open();
          EXPECT_EQ(turned, !open) << "trial " << trial;
          open = true;
          break;
        }
        case 1: // the outer keeper ends: what is kept is freed
          shelf.close();
          open = false;
          has = false;
          break;
        case 2: // a stage allocates something else: drop first
          shelf.drop();
          has = false;
          break;
        default: { // a stage asks for a pool, uses it, lets it go
          auto p = shelf.take(k);
          const bool hit = has && model == k;
          ASSERT_EQ(p != nullptr, hit) << "trial " << trial << " step " << step;
          has = false;
          EXPECT_EQ(g_live, hit ? 1 : 0) << "what was kept and not asked for is freed at once";
          if (p) {
            EXPECT_TRUE(p->made_as == k);
            ++reused;
          } else {
            p = std::make_unique<fake_pool>(k);
            ++made;
          }
          ASSERT_EQ(g_live, 1) << "one pool at a time";
          shelf.give_back(k, std::move(p));
          if (open)
            has = true, model = k;
          break;
        }
        }
        EXPECT_EQ(shelf.is_open(), open);
        const auto kept = shelf.kept();
        ASSERT_EQ(kept.has_value(), has) << "trial " << trial << " step " << step;
        if (kept) {
          EXPECT_TRUE(*kept == model);
        }
        EXPECT_EQ(g_live, has ? 1 : 0) << "trial " << trial << " step " << step;
      }
      EXPECT_GT(made + reused, 0);
    }
    EXPECT_EQ(g_live, 0) << "the shelf's end frees what it kept";
  }
}

// The sequence of gpuprobe run: tune's regions (cudaMalloc, TLB-sized), its scope (the same
// cudaMalloc pool, then VMM), validate's VMM rows, then its small pools and its cudaMalloc rows:
// three TLB-sized pools made where five were, and nothing kept once the keeper ends.
TEST(PoolShelf, TheRunsSequenceMakesEachTlbSizedPoolOnce) {
  g_live = 0;
  gpuprobe::pool_shelf<fake_pool, key> shelf;
  int made = 0;
  const auto use = [&](key k) {
    auto p = shelf.take(k);
    if (!p) {
      p = std::make_unique<fake_pool>(k);
      ++made;
    }
    shelf.give_back(k, std::move(p));
  };
  const key cuda{0, 133}, vmm{1, 133};
  ASSERT_TRUE(shelf.open());   // run's keeper
  EXPECT_FALSE(shelf.open());  // tune's own: inner, changes nothing
  use(cuda);                   // regions
  use(cuda);                   // scope, cudaMalloc
  use(vmm);                    // scope, VMM
  use(vmm);                    // validate's VMM rows
  shelf.drop();                // validate's 8 GiB pools
  EXPECT_EQ(g_live, 0);
  use(cuda);                   // validate's cudaMalloc rows
  EXPECT_EQ(made, 3);
  shelf.close();
  EXPECT_EQ(g_live, 0);
  use(vmm); // keeping off: freed at once
  EXPECT_EQ(g_live, 0);
  EXPECT_FALSE(shelf.kept().has_value());
}
