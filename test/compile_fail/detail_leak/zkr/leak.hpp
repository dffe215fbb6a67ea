#pragma once
// Input of the ctest api.no_detail_in_public_catches (tools/check_public_api.py must find exactly the three
// declarations marked LEAK, and none of the others). Never compiled.

#include <memory>

namespace zkr {
namespace detail {
struct Core;
struct Hidden {
  std::shared_ptr<Core> fine_inside_detail;
};
}  // namespace detail

class Client {
 public:
  template <class Token = int>
  auto async_op(Token&& token = {}) {  // a default `= {}` and a body calling into detail: fine
    return detail::run(core_, [c = core_](auto cb) { cb(c); });
  }
  const std::shared_ptr<detail::Core>& core() const;  // LEAK
  friend struct detail::access;

 protected:
  void hook(detail::Hidden h);  // protected: not checked

 private:
  std::shared_ptr<detail::Core> core_;
};

struct Options {
  detail::Hidden hidden;  // LEAK: a struct's members are public
};

class Derived : public detail::Hidden {};  // LEAK: a public base

}  // namespace zkr

namespace boost::asio {
template <class T>
struct async_result<zkr::detail::Hidden, T> {};  // another library's trait specialization: not ours
}  // namespace boost::asio
