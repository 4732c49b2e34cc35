// Which slots of an alias range a pool maps: every slot a walk touches, over generated
// families of walks, and for a step that is a multiple of the slot nothing else; the runs the
// driver maps and unmaps in one call each; and the quick tlb sweep's points, refinements included,
// inside the slots its plan maps.
#include "common/alias_slots.hpp"
#include "common/units.hpp"
#include "probes/tlb/sweep.hpp"
#include "tests/common/tlb_simulate.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace gpuprobe;

namespace {
constexpr std::uint64_t k_slot = 2 * k_mib;
} // namespace

// 3,000 generated sets of 1-4 walks over ranges of 1-4096 slots: steps of sub-slot sizes,
// multiples of the slot and neither; ends anywhere (past the range too). Every offset a walk
// touches (k x step and k x step + a word at the slot's last 8 bytes) lies in a marked slot; a
// walk whose step is a multiple of the slot marks exactly its own slots.
TEST(AliasSlots, EveryOffsetAWalkTouchesIsInAMarkedSlotAndMultiplesMarkNoMore) {
  std::mt19937_64 rng(48);
  for (int c = 0; c < 3000; ++c) {
    const std::size_t slots = 1 + rng() % 4096;
    std::vector<alias_walk> walks(1 + rng() % 4);
    for (auto &w : walks) {
      switch (rng() % 3) {
      case 0:
        w.step = (1 + rng() % 64) * 8;
        break; // below a slot (sub-chunk strides)
      case 1:
        w.step = (1 + rng() % 64) * k_slot;
        break; // pages of whole slots
      default:
        w.step = k_slot + (1 + rng() % 1000) * 8; // neither
      }
      w.end = 1 + rng() % ((slots + 8) * k_slot);
    }
    const auto m = touched_slots(walks, k_slot, slots);
    ASSERT_EQ(m.size(), slots);
    std::set<std::size_t> exact; // the slots of the walks whose step is a multiple of the slot
    for (const auto &w : walks) {
      const std::uint64_t hops = (w.end + w.step - 1) / w.step;
      for (std::uint64_t k = 0; k < hops && k * w.step / k_slot < slots; k += 1 + hops / 5000) {
        for (const std::uint64_t o : {std::uint64_t(0), k_slot - 8}) {
          if (w.step % k_slot != 0 && o) // a word past the step's offset: multiples only
            continue;
          const std::uint64_t at = k * w.step + o;
          if (at / k_slot < slots) {
            ASSERT_TRUE(m[at / k_slot]) << "case " << c << ": offset " << at << " (step " << w.step
                                        << ", end " << w.end << ") in an unmapped slot";
          }
        }
        if (w.step % k_slot == 0)
          exact.insert(k * w.step / k_slot);
      }
    }
    const bool all_multiples = std::all_of(walks.begin(), walks.end(), [](const alias_walk &w) {
      return w.step % k_slot == 0 && (w.end + w.step - 1) / w.step <= 5000;
    });
    if (all_multiples)
      for (std::size_t i = 0; i < slots; ++i) {
        ASSERT_EQ(bool(m[i]), exact.count(i) > 0) << "case " << c << ", slot " << i;
      }
  }
  EXPECT_EQ(touched_slots({}, k_slot, 7), std::vector<std::uint8_t>(7, 1)) << "no walks: all";
}

// The runs of marked slots, over generated maps: in order, disjoint, each at most max_run long,
// together exactly the marked slots.
TEST(AliasSlots, RunsCoverExactlyTheMarkedSlots) {
  std::mt19937_64 rng(480);
  for (int c = 0; c < 2000; ++c) {
    std::vector<std::uint8_t> m(rng() % 600);
    const unsigned density = 1 + unsigned(rng() % 9);
    for (auto &v : m)
      v = rng() % 10 < density ? 1 : 0;
    const std::size_t max_run = 1 + rng() % 50;
    std::vector<std::uint8_t> seen(m.size(), 0);
    std::size_t last = 0;
    for (const auto &[a, b] : slot_runs(m, max_run)) {
      ASSERT_LT(a, b);
      ASSERT_LE(b - a, max_run);
      ASSERT_GE(a, last) << "in order, disjoint";
      last = b;
      for (std::size_t i = a; i < b; ++i)
        seen[i] = 1;
    }
    ASSERT_EQ(seen, m) << "case " << c;
  }
}

// The quick tlb stage's sweep (probes/tlb/plan.cpp: strides below 8 MiB to 96 GiB) on 40
// simulated GPUs: every point it measures, its ramp-end bisections included, walks offsets inside
// the slots sweep_walks maps, and those are 44 % of the 384 GiB range's slots (86,016 of 196,608:
// every slot below 96 GiB, every fourth above), where the full plan maps every slot.
TEST(AliasSlots, TheQuickSweepWalksOnlyTheSlotsItsPlanMaps) {
  using namespace gpuprobe::probes;
  using namespace gpuprobe::probes::tlb::sim;
  const std::uint64_t range = 384ull << 30;
  const std::size_t slots = range / k_slot;
  const sweep_plan quick = plan_for(sim_mode::quick, range);
  ASSERT_EQ(quick.short_below, 8 * k_mib);
  ASSERT_EQ(quick.short_bytes, 96ull << 30);
  const auto m = touched_slots(sweep_walks(quick, k_slot), k_slot, slots);
  const auto mapped = std::size_t(std::count(m.begin(), m.end(), std::uint8_t(1)));
  EXPECT_EQ(mapped, 49152u + 36864u);
  const auto full =
      touched_slots(sweep_walks(plan_for(sim_mode::full, range), k_slot), k_slot, slots);
  EXPECT_EQ(std::count(full.begin(), full.end(), std::uint8_t(1)), std::ptrdiff_t(slots));
  std::mt19937_64 rng(4848);
  std::size_t points = 0, refined = 0;
  for (int g = 0; g < 40; ++g) {
    const sim_gpu gpu = random_gpu(rng);
    for (const auto &p : simulate_points(gpu, quick, 100 + g)) {
      ++points;
      refined += p.refined;
      ASSERT_LE(p.footprint_bytes, stride_max_bytes(quick, p.stride_bytes));
      for (std::uint64_t k = 0; k < p.hops; k += 1 + p.hops / 3000) {
        ASSERT_TRUE(m[k * p.stride_bytes / k_slot])
            << gpu.describe() << ": stride " << p.stride_bytes << ", hop " << k << " of " << p.hops;
      }
      ASSERT_TRUE(m[(p.hops - 1) * p.stride_bytes / k_slot]);
    }
  }
  EXPECT_GT(refined, 0u) << "the family reaches the bisections";
  std::printf("quick sweep: %zu points (%zu refined) on 40 GPUs, all in the %zu of %zu slots "
              "mapped\n",
              points, refined, mapped, slots);
}
