#include "snippet.hpp"
void discard_wait_for_initial_create(zkr::PersistentNode& n) { ZKR_SNIPPET(n.wait_for_initial_create(1s)); }
