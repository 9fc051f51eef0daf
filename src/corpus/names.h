#pragma once
// Tables of an enum's values and their command-line names (import and export formats).
#include <optional>
#include <string>
#include <string_view>

namespace kvault::corpus {

template <class E>
struct Named {
  E value;
  const char* name;
};

template <class E, size_t N>
std::optional<E> FromName(const Named<E> (&table)[N], std::string_view name) {
  for (const Named<E>& n : table)
    if (name == n.name) return n.value;
  return std::nullopt;
}

// The name of `value` ("" when the table lacks it).
template <class E, size_t N>
const char* NameOf(const Named<E> (&table)[N], E value) {
  for (const Named<E>& n : table)
    if (n.value == value) return n.name;
  return "";
}

// "a|b|c", in table order.
template <class E, size_t N>
std::string NamesOf(const Named<E> (&table)[N]) {
  std::string out;
  for (const Named<E>& n : table) {
    if (!out.empty()) out += '|';
    out += n.name;
  }
  return out;
}

}  // namespace kvault::corpus
