#pragma once
// What an operation completed with, as the tests of every tier compare it: its error code and its value.

#include <boost/system/error_code.hpp>
#include <variant>

namespace zkr::test {

/// An operation's completion: the error code and, for an operation that yields one, the value (`T{}` when it
/// failed). `Outcome<>` is for operations that complete with an error code only.
template <class T = std::monostate>
struct Outcome {
  boost::system::error_code ec;
  T value{};
};

}  // namespace zkr::test
