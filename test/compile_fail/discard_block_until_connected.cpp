#include "snippet.hpp"
void discard_block_until_connected(zkr::CuratorFramework& c) { ZKR_SNIPPET(c.block_until_connected(1s)); }
