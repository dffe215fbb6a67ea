#pragma once
// A tiny JSON value, enough for the driver's one output line.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace zkr_bench {

struct Json;
using JsonObject = std::vector<std::pair<std::string, Json>>;  // in insertion order
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, JsonObject, JsonArray> v;
  Json() : v(nullptr) {}
  Json(std::nullptr_t) : v(nullptr) {}
  Json(bool b) : v(b) {}
  Json(int i) : v(std::int64_t(i)) {}
  Json(long i) : v(std::int64_t(i)) {}
  Json(long long i) : v(std::int64_t(i)) {}
  Json(unsigned long i) : v(std::int64_t(i)) {}
  Json(double d) : v(d) {}
  Json(const char* s) : v(std::string(s)) {}
  Json(std::string s) : v(std::move(s)) {}
  Json(JsonObject o) : v(std::move(o)) {}
  Json(JsonArray a) : v(std::move(a)) {}
  template <class T>
  Json(const std::optional<T>& o) : Json() {
    if (o) *this = Json(*o);
  }
};

/// Compact JSON; doubles with three decimals at most (trailing zeros trimmed), non-finite ones as null.
void write_json(std::ostream& os, const Json& j);

}  // namespace zkr_bench
