#pragma once
/// \file
/// Everything of zkrecipes in one include.

#include <zkr/drivers/lock_driver.hpp>
#include <zkr/drivers/read_write_lock_driver.hpp>
#include <zkr/framework/connection_state.hpp>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/error.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/framework/retry.hpp>
#include <zkr/framework/types.hpp>
#include <zkr/recipes/cache/curator_cache.hpp>
#include <zkr/recipes/cache/node_cache.hpp>
#include <zkr/recipes/cache/path_children_cache.hpp>
#include <zkr/recipes/cache/tree_cache.hpp>
#include <zkr/recipes/inter_process_lock.hpp>
#include <zkr/recipes/inter_process_multi_lock.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>
#include <zkr/recipes/inter_process_read_write_lock.hpp>
#include <zkr/recipes/inter_process_semaphore_mutex.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/leader_selector.hpp>
#include <zkr/recipes/lease.hpp>
#include <zkr/recipes/nodes/persistent_node.hpp>
#include <zkr/recipes/participant.hpp>
#include <zkr/recipes/revoker.hpp>
