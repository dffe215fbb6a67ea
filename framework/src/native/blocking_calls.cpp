// The pool of blocking_calls.hpp.

#include "blocking_calls.hpp"

namespace zkr::detail::native {

boost::asio::thread_pool& blocking_pool() {
  static boost::asio::thread_pool pool(2);
  return pool;
}

}  // namespace zkr::detail::native
