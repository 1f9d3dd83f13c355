#include "base/move_in_order.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace slurmfleet {
namespace {

// Every subset of {0..n-1}, as a bit mask, with `m` members.
std::vector<std::vector<int64_t>> Subsets(size_t n, size_t m) {
  std::vector<std::vector<int64_t>> out;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (static_cast<size_t>(__builtin_popcount(mask)) != m) continue;
    std::vector<int64_t> members;
    for (size_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) members.push_back(static_cast<int64_t>(i));
    }
    out.push_back(std::move(members));
  }
  return out;
}

TEST(MoveInOrderTest, EveryOrderKeepingMappingOfUpToSevenPlacesEndsWithEachElementInItsPlace) {
  // Elements are move-only, so a copy would not compile, and each is known by its address: the
  // element at a place afterwards is the very one that was at its source.
  size_t cases = 0;
  for (size_t n = 0; n <= 7; ++n) {
    for (size_t count = 0; count <= 7; ++count) {
      for (size_t m = 0; m <= std::min(n, count); ++m) {
        for (const std::vector<int64_t>& places : Subsets(count, m)) {
          for (const std::vector<int64_t>& sources : Subsets(n, m)) {
            std::vector<int64_t> from(count, -1);
            for (size_t i = 0; i < m; ++i) from[places[i]] = sources[i];
            std::vector<std::unique_ptr<int>> items;
            std::vector<const int*> was;
            for (size_t i = 0; i < n; ++i) {
              items.push_back(std::make_unique<int>(static_cast<int>(i)));
              was.push_back(items.back().get());
            }
            MoveInOrder(items, count, [&](size_t k) { return from[k]; });
            ASSERT_EQ(items.size(), count);
            for (size_t k = 0; k < count; ++k) {
              if (from[k] < 0) continue;
              ASSERT_EQ(items[k].get(), was[from[k]])
                  << "n " << n << " count " << count << " k " << k;
              ASSERT_EQ(*items[k], from[k]);
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 10000u);
}

TEST(MoveInOrderTest, ElementsMovingBothWaysAroundNewPlacesKeepTheirStrings) {
  // The shape a list of records takes from one list to the next: the first left, one joined at
  // the front, one in the middle, two at the end, the rest kept in their order.
  std::vector<std::string> items;
  for (int i = 0; i < 1000; ++i) items.push_back("record number " + std::to_string(i));
  std::vector<int64_t> from{-1};
  for (int64_t i = 1; i < 500; ++i) from.push_back(i);
  from.push_back(-1);
  for (int64_t i = 500; i < 1000; ++i) from.push_back(i);
  from.push_back(-1);
  from.push_back(-1);
  MoveInOrder(items, from.size(), [&](size_t k) { return from[k]; });
  ASSERT_EQ(items.size(), from.size());
  for (size_t k = 0; k < from.size(); ++k) {
    if (from[k] >= 0) {
      EXPECT_EQ(items[k], "record number " + std::to_string(from[k])) << k;
    }
  }
}

}  // namespace
}  // namespace slurmfleet
