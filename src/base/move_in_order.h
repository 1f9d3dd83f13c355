// MoveInOrder: rearranges a vector in place so that each of its new places takes the element of
// an old place, where the elements taken keep their order. Used for records rebuilt from list to
// list, most of them the last list's records in the same order, a few new ones among them: a new
// array would have to be allocated, and after the allocator gave memory back, touched page by
// page afresh (a page fault each, dear in a VM).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace slurmfleet {

// Makes `items` hold `count` elements, new place k holding the old items[from(k)] for each k whose
// from(k) >= 0. Precondition: those from(k) are increasing in k, and each is below items.size().
// A place whose from(k) < 0 holds an unspecified element afterwards (one of the old ones not
// taken, or a default-constructed one), for the caller to write over: its strings keep their
// capacity. Elements are swapped, never copied.
//
// Why this works in place: with the sources in order, an element that moves to an earlier place
// goes where no later-moving element is still to be read, so those go first, from the front;
// then the elements that move to a later place, from the back.
template <typename T, typename From>
void MoveInOrder(std::vector<T>& items, size_t count, From from) {
  using std::swap;
  if (items.size() < count) items.resize(count);
  for (size_t k = 0; k < count; ++k) {
    const int64_t f = from(k);
    if (f > static_cast<int64_t>(k)) swap(items[k], items[static_cast<size_t>(f)]);
  }
  for (size_t k = count; k-- > 0;) {
    const int64_t f = from(k);
    if (f >= 0 && f < static_cast<int64_t>(k)) swap(items[k], items[static_cast<size_t>(f)]);
  }
  items.resize(count);
}

}  // namespace slurmfleet
