// ActiveSubmissions: the engine's live submissions, found by key and walked in key order.
// A pass walks every one of them several times (to pick the intents, the cancels, the ids to
// track, ...), 10,000 and more at a time. A walk through a tree reads one node to find the next,
// each node a cache miss of its own; a walk here goes through a vector of pointers, whose
// submissions the CPU can load ahead. Lookups go through the map that owns them. The vector is
// rebuilt at the first walk after a key was added or removed; replacing a submission keeps it.
// Not thread-safe: the engine thread's alone.
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "store/submission.h"

namespace slurmfleet::fleet {

class ActiveSubmissions {
  using Order = std::vector<store::Submission*>;

 public:
  // Yields each submission (a T&) in key order.
  template <typename T>
  class BasicIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::remove_const_t<T>;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&;

    BasicIterator() = default;
    explicit BasicIterator(Order::const_iterator at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return *at_; }
    BasicIterator& operator++() {
      ++at_;
      return *this;
    }
    BasicIterator operator++(int) {
      BasicIterator before = *this;
      ++at_;
      return before;
    }
    bool operator==(const BasicIterator&) const = default;

   private:
    Order::const_iterator at_;
  };
  using Iterator = BasicIterator<store::Submission>;
  using ConstIterator = BasicIterator<const store::Submission>;

  // nullptr when no live submission has this key.
  store::Submission* Find(const std::string& key);
  // Adds `s` under its key, or replaces the submission of that key (which keeps its place).
  void Put(store::Submission s);
  void Erase(const std::string& key);
  // Calls `ended(s)` once for each submission, in key order, and removes those it returns true
  // for.
  template <typename Predicate>
  void EraseIf(Predicate ended) {
    Refresh();
    for (store::Submission* s : order_) {
      if (!ended(static_cast<const store::Submission&>(*s))) continue;
      by_key_.erase(by_key_.find(s->key));
      stale_ = true;  // order_ now holds the pointer just freed: rebuilt before the next walk
    }
  }
  size_t size() const { return by_key_.size(); }

  // A walk in progress ends at the next Put of a new key or the next removal.
  Iterator begin();
  Iterator end();
  ConstIterator begin() const;
  ConstIterator end() const;

 private:
  void Refresh() const;

  std::map<std::string, store::Submission> by_key_;
  mutable Order order_;  // by_key_'s submissions in its order, unless stale_
  mutable bool stale_ = false;
};

}  // namespace slurmfleet::fleet
