#include "score/pass_at_k.h"

namespace kvault::score {

double PassAtK(size_t n, size_t c, size_t k) {
  if (n == 0 || c == 0) return 0.0;
  if (n < k) return 1.0;  // c > 0 here
  if (n - c < k) return 1.0;
  double all_wrong = 1.0;  // C(n-c, k) / C(n, k)
  for (size_t i = n - c + 1; i <= n; ++i) all_wrong *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - all_wrong;
}

}  // namespace kvault::score
