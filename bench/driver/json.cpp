#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace zkr_bench {

void write_json(std::ostream& os, const Json& j) {
  struct Visitor {
    std::ostream& os;
    void operator()(std::nullptr_t) const { os << "null"; }
    void operator()(bool b) const { os << (b ? "true" : "false"); }
    void operator()(std::int64_t i) const { os << i; }
    void operator()(double d) const {
      if (!std::isfinite(d)) {
        os << "null";
        return;
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f", d);
      std::string s = buf;  // trim trailing zeros, keep one digit after the point
      while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
      os << s;
    }
    void operator()(const std::string& s) const {
      os << '"';
      for (unsigned char c : s) {
        if (c == '"' || c == '\\')
          os << '\\' << c;
        else if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          os << buf;
        } else
          os << c;
      }
      os << '"';
    }
    void operator()(const JsonArray& a) const {
      os << '[';
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i) os << ',';
        write_json(os, a[i]);
      }
      os << ']';
    }
    void operator()(const JsonObject& o) const {
      os << '{';
      bool first = true;
      for (const auto& [k, v] : o) {
        if (!first) os << ',';
        first = false;
        (*this)(k);
        os << ':';
        write_json(os, v);
      }
      os << '}';
    }
  };
  std::visit(Visitor{os}, j.v);
}

}  // namespace zkr_bench
