#include "fleet/active_submissions.h"

#include <utility>

namespace slurmfleet::fleet {

store::Submission* ActiveSubmissions::Find(const std::string& key) {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &it->second;
}

void ActiveSubmissions::Put(store::Submission s) {
  auto [it, added] = by_key_.try_emplace(s.key);
  it->second = std::move(s);
  if (added) stale_ = true;
}

void ActiveSubmissions::Erase(const std::string& key) {
  if (by_key_.erase(key) > 0) stale_ = true;
}

ActiveSubmissions::Iterator ActiveSubmissions::begin() {
  Refresh();
  return Iterator(order_.cbegin());
}

ActiveSubmissions::Iterator ActiveSubmissions::end() {
  Refresh();
  return Iterator(order_.cend());
}

ActiveSubmissions::ConstIterator ActiveSubmissions::begin() const {
  Refresh();
  return ConstIterator(order_.cbegin());
}

ActiveSubmissions::ConstIterator ActiveSubmissions::end() const {
  Refresh();
  return ConstIterator(order_.cend());
}

void ActiveSubmissions::Refresh() const {
  if (!stale_) return;
  order_.clear();
  order_.reserve(by_key_.size());
  // A const walk yields const submissions (ConstIterator); the pointers are kept mutable only
  // for the non-const one, which starts from a non-const container.
  for (const auto& [key, s] : by_key_) order_.push_back(const_cast<store::Submission*>(&s));
  stale_ = false;
}

}  // namespace slurmfleet::fleet
