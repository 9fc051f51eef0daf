#pragma once
// Disjoint sets over the indices 0 .. size() - 1 (dedup's clusters, the split's task
// families): Find with path halving; the smaller index is the root of a united set.
//
//   UnionFind sets(3);  sets.Unite(2, 0);  sets.Find(2) == 0;  size_t n = sets.Add();
//
// Thread safety: none.
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace kvault::corpus {

class UnionFind {
 public:
  explicit UnionFind(size_t n = 0) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  // A new set of its own; returns its index.
  size_t Add() {
    parent_.push_back(parent_.size());
    return parent_.size() - 1;
  }
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Unite(size_t a, size_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }
  size_t size() const { return parent_.size(); }

 private:
  std::vector<size_t> parent_;
};

}  // namespace kvault::corpus
