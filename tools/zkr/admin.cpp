#include "admin.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>
#include <zkr/drivers/read_write_lock_driver.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/revoker.hpp>

#include "text.hpp"

namespace zkr::cli {

namespace {

struct Row {
  std::string name;
  std::string kind;  ///< lock, read, write, lease, or foreign
  bool holds = false;
  bool foreign = false;
  NodeData node;
};

struct Queue {
  std::string name;         ///< "queue", "leases", "locks", "other", "participants"
  std::string path;         ///< the directory
  std::string description;  ///< one line for the text output
  std::vector<Row> rows;
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

/// Reads the data and Stat of every child; children that vanished meanwhile are dropped.
std::vector<Row> read_rows(CuratorFramework& client, const std::string& dir,
                           const std::vector<std::string>& names, error_code& ec) {
  std::vector<Row> rows;
  for (const auto& n : names) {
    error_code e;
    auto d = client.get_data(make_path(dir, n), {}, e);
    if (e == zk_errc::no_node) continue;
    if (e) {
      ec = e;
      return {};
    }
    rows.push_back(Row{n, "", false, false, std::move(d)});
  }
  return rows;
}

std::vector<std::string> names_of(const std::vector<Row>& rows) {
  std::vector<std::string> v;
  for (auto& r : rows) v.push_back(r.name);
  return v;
}

void order(std::vector<Row>& rows, const std::vector<std::string>& sorted) {
  std::vector<Row> out;
  for (const auto& n : sorted)
    for (auto& r : rows)
      if (r.name == n) out.push_back(std::move(r));
  rows = std::move(out);
}

/// A mutex queue (also the semaphore's internal `locks` queue): Curator's standard predicate with one lease;
/// every child counts as a contender, foreign or not.
void classify_mutex(std::vector<Row>& rows) {
  auto names = names_of(rows);
  standard_lock_driver().sort_children(names, InterProcessMutex::lock_name);
  order(rows, names);
  for (auto& r : rows) {
    r.foreign = !contains(r.name, InterProcessMutex::lock_name);
    r.kind = r.foreign ? "foreign" : "lock";
    auto p = standard_lock_driver().gets_the_lock(names, r.name, 1);
    r.holds = p && p->gets_the_lock;
  }
}

/// A leader election (LeaderLatch: `latch-` nodes; LeaderSelector: an InterProcessMutex's `lock-` nodes):
/// Curator's participant order (sorted by the sequence after `lock_name`, other names by their whole name),
/// and the first node that could be read leads (`getParticipants` / `getLeader`), foreign or not.
void classify_election(std::vector<Row>& rows, std::string_view lock_name, std::string_view kind) {
  auto names = names_of(rows);
  standard_lock_driver().sort_children(names, lock_name);
  order(rows, names);
  for (auto& r : rows) {
    r.foreign = !contains(r.name, lock_name);
    r.kind = r.foreign ? "foreign" : std::string(kind);
  }
  if (!rows.empty()) rows.front().holds = true;
}

/// The ten-digit sequence that ends a recipe's node name, or -1 when the name has none.
long long sequence_of(std::string_view name) {
  if (name.size() < 10) return -1;
  auto digits = name.substr(name.size() - 10);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return std::stoll(std::string(digits));
}

/// A read-write lock: Curator's read and write predicates over the combined queue.
void classify_read_write(std::vector<Row>& rows) {
  auto names = names_of(rows);
  write_lock_driver().sort_children(names, "");
  order(rows, names);
  for (auto& r : rows) {
    if (contains(r.name, write_lock_name)) {
      r.kind = "write";
      auto p = write_lock_driver().gets_the_lock(names, r.name, 1);
      r.holds = p && p->gets_the_lock;
    } else if (contains(r.name, read_lock_name)) {
      r.kind = "read";
      auto p = read_lock_driver().read_gets_the_lock(names, r.name, false);
      r.holds = p && p->gets_the_lock;
    } else {
      r.kind = "foreign";
      r.foreign = true;
    }
  }
  // A downgrade read node (CURATOR-621) carries the sequence of its owner's write node: it holds with it.
  for (auto& r : rows) {
    if (r.kind != "read" || r.holds) continue;
    for (auto& w : rows) {
      if (w.kind == "write" && w.holds && w.node.stat.ephemeral_owner == r.node.stat.ephemeral_owner &&
          read_write_sort_key(w.name) == read_write_sort_key(r.name))
        r.holds = true;
    }
  }
}

/// A semaphore's leases: every lease node is a holder.
void classify_leases(std::vector<Row>& rows) {
  auto names = names_of(rows);
  standard_lock_driver().sort_children(names, InterProcessSemaphoreV2::lease_base_name);
  order(rows, names);
  for (auto& r : rows) {
    r.foreign = !contains(r.name, InterProcessSemaphoreV2::lease_base_name);
    r.kind = r.foreign ? "foreign" : "lease";
    r.holds = !r.foreign;
  }
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t age_ms(const Stat& st, std::int64_t now) { return std::max<std::int64_t>(0, now - st.ctime); }

/// The table of one queue. A lock queue: POS, HOLDS, KIND, OWNER, AGE, NODE, DATA; an election's
/// participants: POS, LEADER, SEQ, OWNER, AGE, NODE, ID, then the leader.
void print_rows(const Queue& q, std::int64_t now) {
  const bool election = q.name == "participants";
  if (q.rows.empty()) {
    std::fputs(election ? "  (no participants: no leader)\n" : "  (empty)\n", stdout);
    return;
  }
  std::size_t name_w = 4;
  for (auto& r : q.rows) name_w = std::max(name_w, r.name.size());
  const int flag_w = election ? 6 : 5;
  const int third_w = election ? 10 : 7;
  std::printf("  %-4s %-*s %-*s %-18s %-8s %-*s %s\n", "POS", flag_w, election ? "LEADER" : "HOLDS", third_w,
              election ? "SEQ" : "KIND", "OWNER", "AGE", static_cast<int>(name_w), "NODE",
              election ? "ID" : "DATA");
  std::size_t pos = 0;
  for (auto& r : q.rows) {
    ++pos;
    const auto seq = sequence_of(r.name);
    const std::string third = !election ? r.kind : seq < 0 ? "-" : std::to_string(seq);
    std::printf("  %-4zu %-*s %-*s %-18s %-8s %-*s %s\n", pos, flag_w, r.holds ? "yes" : "-", third_w,
                third.c_str(), hex_session(r.node.stat.ephemeral_owner).c_str(),
                format_duration(std::chrono::milliseconds(age_ms(r.node.stat, now))).c_str(),
                static_cast<int>(name_w), r.name.c_str(), printable(r.node.data, 60).c_str());
  }
  if (election) {
    const auto& leader = q.rows.front();
    std::printf("\nleader: %s (node %s, session %s)\n", printable(leader.node.data, 60).c_str(),
                leader.name.c_str(), hex_session(leader.node.stat.ephemeral_owner).c_str());
  }
}

void print_text(const std::string& path, bool exists, std::string_view type,
                const std::vector<Queue>& queues) {
  if (!exists) {
    std::printf("%s: does not exist (no lock has been taken there, or its empty directory was reaped)\n",
                path.c_str());
    return;
  }
  std::size_t total = 0;
  for (auto& q : queues) total += q.rows.size();
  std::printf("%s: %.*s, %zu node%s\n", path.c_str(), static_cast<int>(type.size()), type.data(), total,
              total == 1 ? "" : "s");
  const auto now = now_ms();
  for (auto& q : queues) {
    if (queues.size() > 1 || !q.description.empty()) std::printf("\n%s\n", q.description.c_str());
    print_rows(q, now);
  }
  bool any_foreign = false;
  for (auto& q : queues)
    for (auto& r : q.rows) any_foreign = any_foreign || r.foreign;
  if (any_foreign)
    std::printf(
        "\nforeign: a node whose name matches no lock recipe of this kind (it still counts as a contender "
        "where Curator counts it)\n");
}

void print_json(const std::string& path, bool exists, std::string_view type,
                const std::vector<Queue>& queues) {
  const auto now = now_ms();
  std::printf("{\"path\":\"%s\",\"exists\":%s,\"type\":\"%.*s\",\"queues\":[", json_escape(path).c_str(),
              exists ? "true" : "false", static_cast<int>(type.size()), type.data());
  for (std::size_t qi = 0; qi < queues.size(); ++qi) {
    auto& q = queues[qi];
    std::printf("%s{\"name\":\"%s\",\"path\":\"%s\",\"nodes\":[", qi ? "," : "", q.name.c_str(),
                json_escape(q.path).c_str());
    for (std::size_t i = 0; i < q.rows.size(); ++i) {
      auto& r = q.rows[i];
      std::printf(
          "%s{\"position\":%zu,\"name\":\"%s\",\"path\":\"%s\",\"kind\":\"%s\",\"holds\":%s,"
          "\"foreign\":%s,\"owner\":\"%s\",\"age_ms\":%lld,\"fencing_token\":%lld,\"sequence\":%s,"
          "\"data\":\"%s\"",
          i ? "," : "", i + 1, json_escape(r.name).c_str(), json_escape(make_path(q.path, r.name)).c_str(),
          r.kind.c_str(), r.holds ? "true" : "false", r.foreign ? "true" : "false",
          hex_session(r.node.stat.ephemeral_owner).c_str(), static_cast<long long>(age_ms(r.node.stat, now)),
          static_cast<long long>(r.node.stat.czxid),
          sequence_of(r.name) < 0 ? "null" : std::to_string(sequence_of(r.name)).c_str(),
          json_escape(r.node.data).c_str());
      // A participant's id is its node's data; the leader is the first participant.
      if (q.name == "participants")
        std::printf(",\"leader\":%s,\"id\":\"%s\"", r.holds ? "true" : "false",
                    json_escape(r.node.data).c_str());
      std::printf("}");
    }
    std::printf("]}");
  }
  std::printf("]");
  for (auto& q : queues) {
    if (q.name != "participants") continue;
    if (q.rows.empty()) {
      std::printf(",\"leader\":null");
    } else {
      auto& r = q.rows.front();
      std::printf(",\"leader\":{\"name\":\"%s\",\"path\":\"%s\",\"id\":\"%s\",\"owner\":\"%s\"}",
                  json_escape(r.name).c_str(), json_escape(make_path(q.path, r.name)).c_str(),
                  json_escape(r.node.data).c_str(), hex_session(r.node.stat.ephemeral_owner).c_str());
    }
  }
  std::printf("}\n");
}

/// A connected client for a one-shot command, or the exit status.
std::unique_ptr<CuratorFramework> connect(const CommonOptions& common, int& status) {
  std::unique_ptr<CuratorFramework> client;
  try {
    client = make_client(common, make_logger(common), std::nullopt);
  } catch (const Error& e) {
    status = report_start_failure(common, e);
    return nullptr;
  }
  if (!client->block_until_connected(common.connection_timeout)) {
    say_error("could not connect to ZooKeeper at " + common.connect + " within " +
              format_duration(common.connection_timeout));
    status = exit_status::unavailable;
    return nullptr;
  }
  return client;
}

}  // namespace

int inspect(const CommonOptions& common, const std::string& path, LockKind kind, bool json) {
  if (auto why = path_error(path)) {
    say_error("invalid path " + path + ": " + *why);
    return exit_status::usage;
  }
  int status = 0;
  auto client = connect(common, status);
  if (!client) return status;

  error_code ec;
  auto children = client->get_children(path, {}, ec);
  bool exists = true;
  if (ec == zk_errc::no_node) {
    exists = false;
    children.clear();
    ec = {};
  }
  if (ec) {
    say_error("cannot list " + path + ": " + ec.message());
    return status_for(ec);
  }

  const bool semaphore_layout = std::any_of(children.begin(), children.end(),
                                            [](const std::string& c) {
                                              return c == InterProcessSemaphoreV2::lease_parent ||
                                                     c == InterProcessSemaphoreV2::lock_parent;
                                            }) &&
                                std::none_of(children.begin(), children.end(), [](const std::string& c) {
                                  return contains(c, InterProcessMutex::lock_name) ||
                                         contains(c, read_lock_name) || contains(c, write_lock_name);
                                });
  if (kind == LockKind::automatic) {
    if (semaphore_layout)
      kind = LockKind::semaphore;
    else if (std::any_of(children.begin(), children.end(),
                         [](const std::string& c) { return contains(c, LeaderLatch::lock_name); }) &&
             std::none_of(children.begin(), children.end(), [](const std::string& c) {
               return contains(c, InterProcessMutex::lock_name) || contains(c, read_lock_name) ||
                      contains(c, write_lock_name);
             }))
      kind = LockKind::latch;
    else if (std::any_of(children.begin(), children.end(), [](const std::string& c) {
               return contains(c, read_lock_name) || contains(c, write_lock_name);
             }))
      kind = LockKind::read_write;
    else
      kind = LockKind::mutex;
  }

  std::vector<Queue> queues;
  std::string type;
  if (kind == LockKind::semaphore) {
    type = "semaphore";
    Queue leases{"leases",
                 make_path(path, InterProcessSemaphoreV2::lease_parent),
                 "leases (" + make_path(path, InterProcessSemaphoreV2::lease_parent) +
                     "): the holders, and the lease node of the first waiter (HOLDS -)",
                 {}};
    Queue locks{"locks",
                make_path(path, InterProcessSemaphoreV2::lock_parent),
                "locks (" + make_path(path, InterProcessSemaphoreV2::lock_parent) +
                    "): the waiting queue; its first node holds the internal lock and waits for a free lease",
                {}};
    for (Queue* q : {&leases, &locks}) {
      auto names = client->get_children(q->path, {}, ec);
      if (ec == zk_errc::no_node) names.clear(), ec = {};
      if (!ec) q->rows = read_rows(*client, q->path, names, ec);
      if (ec) {
        say_error("cannot read " + q->path + ": " + ec.message());
        return status_for(ec);
      }
    }
    classify_leases(leases.rows);
    classify_mutex(locks.rows);
    // Curator's semaphore: the first of the `locks` queue creates its lease node, then waits (holding the
    // internal lock) while there are more lease nodes than leases. Its newest lease node is that wait, not a
    // hold.
    if (!locks.rows.empty()) {
      const auto waiter = locks.rows.front().node.stat.ephemeral_owner;
      for (auto it = leases.rows.rbegin(); it != leases.rows.rend(); ++it) {
        if (!it->foreign && it->node.stat.ephemeral_owner == waiter) {
          it->holds = false;
          break;
        }
      }
    }
    queues.push_back(std::move(leases));
    queues.push_back(std::move(locks));
    // Anything else in a semaphore directory is foreign.
    std::vector<std::string> others;
    for (auto& c : children)
      if (c != InterProcessSemaphoreV2::lease_parent && c != InterProcessSemaphoreV2::lock_parent)
        others.push_back(c);
    if (!others.empty()) {
      Queue other{"other", path, "other children of " + path + " (foreign)",
                  read_rows(*client, path, others, ec)};
      if (ec) {
        say_error("cannot read " + path + ": " + ec.message());
        return status_for(ec);
      }
      for (auto& r : other.rows) {
        r.kind = "foreign";
        r.foreign = true;
      }
      queues.push_back(std::move(other));
    }
  } else {
    Queue q{"queue", path, "", read_rows(*client, path, children, ec)};
    if (ec) {
      say_error("cannot read " + path + ": " + ec.message());
      return status_for(ec);
    }
    if (kind == LockKind::read_write) {
      type = "read-write lock";
      classify_read_write(q.rows);
    } else if (kind == LockKind::latch || kind == LockKind::selector) {
      const bool latch = kind == LockKind::latch;
      type = latch ? "leader latch" : "leader selector";
      q.name = "participants";
      q.description = latch ? "LeaderLatch election: latch- nodes in Curator's order; the first one leads"
                            : "LeaderSelector (mutex) election: the InterProcessMutex's lock- nodes in "
                              "Curator's order; the first one (the lock holder) leads";
      classify_election(q.rows, latch ? LeaderLatch::lock_name : InterProcessMutex::lock_name,
                        latch ? "latch" : "lock");
    } else {
      type = "mutex";
      classify_mutex(q.rows);
    }
    queues.push_back(std::move(q));
  }

  if (json)
    print_json(path, exists, type, queues);
  else
    print_text(path, exists, type, queues);
  std::fflush(stdout);
  client->close();
  return exit_status::ok;
}

namespace {

/// Whether `name` is a lock node of one of the recipes: Curator's protected name `_c_<uuid>-` followed by
/// `lock-` (mutex, a semaphore's internal lock), `__READ__` / `__WRIT__` (read-write lock) or `lease-`
/// (semaphore), and the ten-digit sequence.
bool is_lock_node_name(std::string_view name) {
  constexpr std::string_view prefix = "_c_";
  constexpr std::size_t uuid_size = 36;
  if (name.size() < prefix.size() + uuid_size + 1 + 10 || name.substr(0, prefix.size()) != prefix)
    return false;
  const auto uuid = name.substr(prefix.size(), uuid_size);
  for (std::size_t k = 0; k < uuid.size(); ++k) {
    const bool dash = k == 8 || k == 13 || k == 18 || k == 23;
    if (dash ? uuid[k] != '-' : !std::isxdigit(static_cast<unsigned char>(uuid[k]))) return false;
  }
  auto rest = name.substr(prefix.size() + uuid_size);
  if (rest.front() != '-') return false;
  rest.remove_prefix(1);
  const auto sequence = rest.substr(rest.size() - 10);
  if (!std::all_of(sequence.begin(), sequence.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const auto marker = rest.substr(0, rest.size() - 10);
  return marker == InterProcessMutex::lock_name || marker == read_lock_name || marker == write_lock_name ||
         marker == InterProcessSemaphoreV2::lease_base_name;
}

}  // namespace

int revoke(const CommonOptions& common, const std::string& node_path) {
  if (auto why = path_error(node_path)) {
    say_error("invalid path " + node_path + ": " + *why);
    return exit_status::usage;
  }
  int status = 0;
  auto client = connect(common, status);
  if (!client) return status;
  error_code ec;
  auto stat = client->exists(node_path, {}, ec);
  if (!ec && !stat) {
    say_error(node_path + " does not exist: nothing to revoke");
    return exit_status::error;
  }
  // Revoker writes into whatever node it is given: refuse anything but a live lock node (a lock directory or
  // a configuration node would lose its data).
  if (!ec && (stat->ephemeral_owner == 0 || !is_lock_node_name(node_name(node_path)))) {
    say_error(node_path + " is not a lock node (an ephemeral _c_<uuid>-lock-, -__READ__, -__WRIT__ or " +
              "-lease- node, as `zkr inspect` lists): not revoking it");
    return exit_status::usage;
  }
  if (!ec) Revoker::attempt_revoke(*client, node_path, ec);
  if (ec) {
    say_error("cannot revoke " + node_path + ": " + ec.message());
    return status_for(ec);
  }
  say(common, "revocation requested for " + node_path +
                  " (the holder gives the lock up only if it made it revocable)");
  client->close();
  return exit_status::ok;
}

}  // namespace zkr::cli
