// libFuzzer target: the path rules and helpers (framework/include/zkr/framework/paths.hpp) on arbitrary
// bytes. Nothing may crash, and the helpers must agree with the validator:
//   - path_error(p, true) is path_error(p + "1");
//   - a valid p gives a valid make_path(p, "x"), parent_path(p) and make_path("/", node_name(p));
//     make_path(parent_path(p), node_name(p)) == p; joining split_path(p) gives p back;
//   - the protected form of a valid p is valid, protected, and normalizes back to node_name(p);
//   - normalize strips exactly 40 characters from a protected name and nothing otherwise;
//   - sequential_suffix is at most 10 characters and a suffix of its input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <zkr/framework/paths.hpp>

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string p(reinterpret_cast<const char*>(data), size);
  using namespace zkr;

  const auto err = path_error(p);
  check(path_error(p, true) == path_error(p + "1"));
  (void)make_path(p, p);
  (void)parent_path(p);
  (void)node_name(p);
  (void)split_path(p);

  const auto name = protected_names::normalize(p);
  if (protected_names::is_protected_node(p)) {
    check(p.size() > protected_names::prefix_with_uuid_length);
    check(name.size() + protected_names::prefix_with_uuid_length == p.size());
  } else {
    check(name == p);
  }
  const auto suffix = sequential_suffix(p);
  check(suffix.size() <= 10 && std::string_view(p).ends_with(suffix));

  if (err) return 0;
  check(is_valid_path(make_path(p, "x")));
  check(is_valid_path(parent_path(p)));
  std::string joined;
  for (const auto& s : split_path(p)) joined += "/" + s;
  check(joined.empty() ? p == "/" : joined == p);
  if (p == "/") return 0;
  const auto last = node_name(p);
  check(!last.empty() && is_valid_path(make_path("/", last)));
  check(make_path(parent_path(p), last) == p);
  const auto prot = protected_names::to_protected_path(p, "0f1e2d3c-4b5a-4697-8877-665544332211");
  check(is_valid_path(prot));
  check(parent_path(prot) == parent_path(p));
  check(protected_names::is_protected_node(node_name(prot)));
  check(protected_names::normalize(node_name(prot)) == last);
  return 0;
}
