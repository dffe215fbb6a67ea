// TreeStore: the cache engine's storage as a tree (see zkr/recipes/detail/tree_store.hpp). A node is one
// allocation: a fixed part (children, Stat, two lengths), then its watches when it has any, its name and its
// bytes. A parent finds its children in an open-addressing hash table of node pointers (linear probing, a
// power-of-two capacity filled to at most 7/8), so that a node costs its allocation and about one pointer in
// its parent's table: no per-node tree links, no path string.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <utility>
#include <zkr/recipes/detail/tree_store.hpp>

namespace zkr::detail {

namespace tree_store {

struct Node {
  Table* children = nullptr;  // nullptr while it has none
  std::int64_t czxid = 0, mzxid = 0, ctime = 0, mtime = 0, ephemeral_owner = 0, pzxid = 0;
  std::int32_t version = 0, cversion = 0, aversion = 0, data_length = 0, num_children = 0;
  std::uint32_t name_bits = 0;  // the name's length; the high bit: the node has room for watches
  std::uint32_t bytes_len = 0;
  char tail[4] = {};  // where the rest of the allocation begins: [NodeWatches] name bytes
};

struct Table {
  std::uint32_t size = 0;
  std::uint32_t mask = 0;  // capacity - 1; the slots (Node*) follow
};

}  // namespace tree_store

namespace {

using tree_store::Node;
using tree_store::Table;

constexpr std::size_t fixed_size = offsetof(Node, tail);
constexpr std::uint32_t watch_bit = 0x80000000u;
static_assert(sizeof(Table) % alignof(Node*) == 0);

// ---- a node's parts

bool has_watches(const Node* n) noexcept { return (n->name_bits & watch_bit) != 0; }
std::size_t watch_room(bool watches) noexcept { return watches ? sizeof(NodeWatches) : 0; }
std::uint32_t name_len(const Node* n) noexcept { return n->name_bits & ~watch_bit; }
const char* tail(const Node* n) noexcept { return reinterpret_cast<const char*>(n) + fixed_size; }
char* tail(Node* n) noexcept { return reinterpret_cast<char*>(n) + fixed_size; }

std::string_view name_of(const Node* n) noexcept {
  return {tail(n) + watch_room(has_watches(n)), name_len(n)};
}
std::string_view bytes_of(const Node* n) noexcept {
  return {tail(n) + watch_room(has_watches(n)) + name_len(n), n->bytes_len};
}
NodeWatches watches_of(const Node* n) noexcept {
  NodeWatches w;
  if (has_watches(n)) std::memcpy(&w, tail(n), sizeof w);  // unaligned: copied, not referenced
  return w;
}
void put_watches(Node* n, const NodeWatches& w) noexcept { std::memcpy(tail(n), &w, sizeof w); }
std::size_t count(const NodeWatches& w) noexcept { return (w.data ? 1 : 0) + (w.children ? 1 : 0); }

void put_stat(Node* n, const Stat& s) noexcept {
  n->czxid = s.czxid;
  n->mzxid = s.mzxid;
  n->ctime = s.ctime;
  n->mtime = s.mtime;
  n->version = s.version;
  n->cversion = s.cversion;
  n->aversion = s.aversion;
  n->ephemeral_owner = s.ephemeral_owner;
  n->data_length = s.data_length;
  n->num_children = s.num_children;
  n->pzxid = s.pzxid;
}

Stat stat_of(const Node* n) noexcept {
  Stat s;
  s.czxid = n->czxid;
  s.mzxid = n->mzxid;
  s.ctime = n->ctime;
  s.mtime = n->mtime;
  s.version = n->version;
  s.cversion = n->cversion;
  s.aversion = n->aversion;
  s.ephemeral_owner = n->ephemeral_owner;
  s.data_length = n->data_length;
  s.num_children = n->num_children;
  s.pzxid = n->pzxid;
  return s;
}

/// Copies `from` to `to` (memmove: they may overlap); nothing for an empty view, whose data() may be null.
void copy_in(char* to, std::string_view from) noexcept {
  if (!from.empty()) std::memmove(to, from.data(), from.size());
}

/// A node of fixed part `like` (nullptr: a blank one) with `name` and `bytes`, and `watches` when `room`.
Node* make_node(const Node* like, std::string_view name, std::string_view bytes, bool room,
                NodeWatches watches) {
  const auto size = std::max(sizeof(Node), fixed_size + watch_room(room) + name.size() + bytes.size());
  auto* n = ::new (::operator new(size)) Node{};
  if (like) *n = *like;
  n->name_bits = static_cast<std::uint32_t>(name.size()) | (room ? watch_bit : 0);
  n->bytes_len = static_cast<std::uint32_t>(bytes.size());
  if (room) put_watches(n, watches);
  // `name` or `bytes` may lie in `like`'s allocation: it is freed only after this copy.
  copy_in(tail(n) + watch_room(room), name);
  copy_in(tail(n) + watch_room(room) + name.size(), bytes);
  return n;
}

void free_node(Node* n) noexcept {
  n->~Node();
  ::operator delete(n);
}

// ---- a parent's table of children

Node** slots(Table* t) noexcept { return reinterpret_cast<Node**>(t + 1); }
std::size_t capacity(const Table* t) noexcept { return t ? std::size_t{t->mask} + 1 : 0; }
std::size_t home(const Table* t, std::string_view name) noexcept {
  return std::hash<std::string_view>{}(name)&t->mask;
}

Table* make_table(std::size_t cap) {
  auto* t = ::new (::operator new(sizeof(Table) + cap * sizeof(Node*))) Table{};
  t->mask = static_cast<std::uint32_t>(cap - 1);
  std::uninitialized_fill_n(slots(t), cap, nullptr);
  return t;
}

void free_table(Table* t) noexcept {
  if (!t) return;
  t->~Table();
  ::operator delete(t);
}

/// The slot holding the child `name`, nullptr when there is none.
Node** lookup(Table* t, std::string_view name) noexcept {
  if (!t) return nullptr;
  auto* s = slots(t);
  for (auto i = home(t, name);; i = (i + 1) & t->mask) {
    if (!s[i]) return nullptr;
    if (name_of(s[i]) == name) return &s[i];
  }
}

/// Puts `n`, whose name the table does not hold, in the first free slot from its home (there is one).
void place(Table* t, Node* n) noexcept {
  auto* s = slots(t);
  auto i = home(t, name_of(n));
  while (s[i]) i = (i + 1) & t->mask;
  s[i] = n;
  ++t->size;
}

/// Empties `where`, moving back the entries after it that their home allows (no tombstones).
void unplace(Table* t, Node** where) noexcept {
  auto* s = slots(t);
  auto i = static_cast<std::size_t>(where - s);
  for (auto j = (i + 1) & t->mask; s[j]; j = (j + 1) & t->mask) {
    const auto k = home(t, name_of(s[j]));
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);  // its home lies in (i, j]
    if (!stays) {
      s[i] = s[j];
      i = j;
    }
  }
  s[i] = nullptr;
  --t->size;
}

/// `t`, or a table that replaces it, sized for `want` children: grown past 7/8 full, shrunk under 1/4 full,
/// freed when empty.
Table* fit(Table* t, std::size_t want) {
  if (want == 0) {
    free_table(t);
    return nullptr;
  }
  const auto cap = capacity(t);
  if (t && want * 8 <= cap * 7 && (want * 4 >= cap || cap == 4)) return t;
  std::size_t fresh_cap = 4;
  while (want * 8 > fresh_cap * 7) fresh_cap *= 2;
  if (fresh_cap == cap) return t;
  auto* fresh = make_table(fresh_cap);
  for (std::size_t i = 0; i < cap; ++i)
    if (auto* n = slots(t)[i]) place(fresh, n);
  free_table(t);
  return fresh;
}

/// The children of `n`, in no order.
std::vector<Node*> children(const Node* n) {
  std::vector<Node*> out;
  if (auto* t = n->children) {
    out.reserve(t->size);
    for (std::size_t i = 0; i <= t->mask; ++i)
      if (auto* c = slots(t)[i]) out.push_back(c);
  }
  return out;
}

std::vector<Node*> children_by_name(const Node* n) {
  auto out = children(n);
  std::sort(out.begin(), out.end(), [](const Node* a, const Node* b) { return name_of(a) < name_of(b); });
  return out;
}

/// Calls `f` on every node of the subtree of `top` (parents before children).
template <class F>
void each(Node* top, F&& f) {
  if (!top) return;
  std::vector<Node*> todo{top};
  while (!todo.empty()) {
    auto* n = todo.back();
    todo.pop_back();
    f(n);
    for (auto* c : children(n)) todo.push_back(c);
  }
}

/// Frees `top` and everything below it without allocating (a destructor's work): the nodes still to free are
/// chained through the storage of their Stat, no longer needed.
void free_subtree(Node* top) noexcept {
  static_assert(sizeof(Node*) <= sizeof(Node::czxid));
  const auto link = [](Node* n, Node* next) { std::memcpy(&n->czxid, &next, sizeof next); };
  const auto next_of = [](const Node* n) {
    Node* next = nullptr;
    std::memcpy(&next, &n->czxid, sizeof next);
    return next;
  };
  if (!top) return;
  link(top, nullptr);
  for (Node* todo = top; todo;) {
    auto* n = todo;
    todo = next_of(n);
    if (auto* t = n->children) {
      for (std::size_t i = 0; i <= t->mask; ++i) {
        if (auto* c = slots(t)[i]) {
          link(c, todo);
          todo = c;
        }
      }
      free_table(t);
    }
    free_node(n);
  }
}

std::string join(std::string_view parent, std::string_view name) {
  std::string p;
  p.reserve(parent.size() + 1 + name.size());
  p.append(parent);
  if (parent != "/") p.push_back('/');
  p.append(name);
  return p;
}

/// In a parent's listing for path order: a child itself (its key: its name), or everything below it (its
/// key: its name and a '/', since every path below it begins so). The keys of one parent's listing are
/// distinct, and the descendants of a child sort together, not always right after it: "a", "a-b", "a/c".
struct Item {
  Node* node;
  bool below;
};

bool key_less(const Item& x, const Item& y) noexcept {
  const auto a = name_of(x.node), b = name_of(y.node);
  const auto common = std::min(a.size(), b.size());
  if (const int c = a.substr(0, common).compare(b.substr(0, common))) return c < 0;
  // One name begins the other: compare what follows, a name's end reading as its '/' when `below`.
  const auto la = a.size() + (x.below ? 1 : 0), lb = b.size() + (y.below ? 1 : 0);
  for (auto i = common; i < la && i < lb; ++i) {
    const auto ca = static_cast<unsigned char>(i < a.size() ? a[i] : '/');
    const auto cb = static_cast<unsigned char>(i < b.size() ? b[i] : '/');
    if (ca != cb) return ca < cb;
  }
  return la < lb;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------

TreeStore::TreeStore(std::string root) : root_path_(std::move(root)) {}

TreeStore::~TreeStore() { clear(); }

TreeStore::Place TreeStore::locate(std::string_view path) const {
  // The slots are the store's own; a const reader only reads through them.
  auto* top = const_cast<Node**>(&root_);
  if (!root_) return {};
  if (path == root_path_) return {nullptr, top};
  std::string_view rest;
  if (root_path_ == "/") {
    if (path.size() < 2 || path[0] != '/') return {};
    rest = path.substr(1);
  } else {
    if (path.size() < root_path_.size() + 2 || path.substr(0, root_path_.size()) != root_path_ ||
        path[root_path_.size()] != '/')
      return {};
    rest = path.substr(root_path_.size() + 1);
  }
  Place at{nullptr, top};
  for (;;) {
    const auto slash = rest.find('/');
    const auto name = rest.substr(0, slash);
    if (name.empty()) return {};
    at.parent = *at.slot;
    at.slot = lookup(at.parent->children, name);
    if (!at.slot) return {};
    if (slash == std::string_view::npos) return at;
    rest.remove_prefix(slash + 1);
  }
}

bool TreeStore::contains(std::string_view path) const { return find(path) != nullptr; }

std::optional<ChildData> TreeStore::get(std::string_view path) const {
  auto* n = find(path);
  if (!n) return std::nullopt;
  return ChildData{std::string(path), stat_of(n), std::string(bytes_of(n))};
}

std::optional<Stat> TreeStore::stat(std::string_view path) const {
  auto* n = find(path);
  if (!n) return std::nullopt;
  return stat_of(n);
}

std::vector<std::pair<std::string, TreeStore::Node*>> TreeStore::walk(std::string top_path, Node* top) {
  std::vector<std::pair<std::string, Node*>> out;
  struct Level {
    std::string path;
    std::vector<Item> items;  // in key order
    std::size_t next = 0;
  };
  std::vector<Level> levels;
  auto open = [&levels](std::string path, const Node* n) {
    Level l{std::move(path), {}, 0};
    for (auto* c : children(n)) {
      l.items.push_back({c, false});
      if (c->children) l.items.push_back({c, true});
    }
    std::sort(l.items.begin(), l.items.end(), key_less);
    levels.push_back(std::move(l));
  };
  out.emplace_back(top_path, top);
  open(std::move(top_path), top);
  while (!levels.empty()) {
    auto& l = levels.back();
    if (l.next == l.items.size()) {
      levels.pop_back();
      continue;
    }
    const auto item = l.items[l.next++];
    auto path = join(l.path, name_of(item.node));
    if (item.below)
      open(std::move(path), item.node);  // `l` is not used after this
    else
      out.emplace_back(std::move(path), item.node);
  }
  return out;
}

std::vector<ChildData> TreeStore::snapshot() const {
  std::vector<ChildData> out;
  if (!root_) return out;
  out.reserve(size_);
  for (auto& [path, n] : walk(root_path_, root_))
    out.push_back({std::move(path), stat_of(n), std::string(bytes_of(n))});
  return out;
}

std::optional<std::vector<ChildData>> TreeStore::children_of(std::string_view path) const {
  auto* n = find(path);
  if (!n) return std::nullopt;
  std::vector<ChildData> out;
  for (auto* c : children_by_name(n))
    out.push_back({join(path, name_of(c)), stat_of(c), std::string(bytes_of(c))});
  return out;
}

std::optional<std::vector<std::string>> TreeStore::child_names(std::string_view path) const {
  auto* n = find(path);
  if (!n) return std::nullopt;
  std::vector<std::string> out;
  for (auto* c : children_by_name(n)) out.emplace_back(name_of(c));
  return out;
}

bool TreeStore::insert(std::string_view path, const Stat& stat, std::string_view bytes, NodeWatches watches) {
  const bool room = count(watches) != 0;
  Node* fresh = nullptr;
  if (path == root_path_) {
    if (root_) return false;
    fresh = root_ = make_node(nullptr, {}, bytes, room, watches);
  } else {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash + 1 == path.size()) return false;
    auto* parent = find(slash == 0 ? std::string_view("/") : path.substr(0, slash));
    const auto name = path.substr(slash + 1);
    if (!parent || lookup(parent->children, name)) return false;
    fresh = make_node(nullptr, name, bytes, room, watches);
    parent->children = fit(parent->children, (parent->children ? parent->children->size : 0) + 1);
    place(parent->children, fresh);
  }
  put_stat(fresh, stat);
  ++size_;
  watch_count_ += count(watches);
  return true;
}

bool TreeStore::set_stat(std::string_view path, const Stat& stat) {
  auto* n = find(path);
  if (n) put_stat(n, stat);
  return n != nullptr;
}

bool TreeStore::set_bytes(std::string_view path, std::string_view bytes) {
  auto* at = locate(path).slot;
  if (!at) return false;
  auto* old = *at;
  if (bytes.size() == old->bytes_len) {
    copy_in(tail(old) + watch_room(has_watches(old)) + name_len(old), bytes);
    return true;
  }
  *at = make_node(old, name_of(old), bytes, has_watches(old), watches_of(old));
  free_node(old);
  return true;
}

std::optional<NodeWatches> TreeStore::watches(std::string_view path) const {
  auto* n = find(path);
  if (!n) return std::nullopt;
  return watches_of(n);
}

WatchId TreeStore::set_watch(std::string_view path, WatchKind kind, WatchId id) {
  auto* at = locate(path).slot;
  if (!at) return 0;
  auto* n = *at;
  if (!has_watches(n)) {
    if (!id) return 0;
    *at = make_node(n, name_of(n), bytes_of(n), true, {});
    free_node(n);
    n = *at;
  }
  auto w = watches_of(n);
  const auto before = count(w);
  auto& slot = kind == WatchKind::data ? w.data : w.children;
  const auto old = std::exchange(slot, id);
  put_watches(n, w);
  watch_count_ = watch_count_ - before + count(w);
  return old;
}

void TreeStore::forget_watches() {
  each(root_, [](Node* n) {
    if (has_watches(n)) put_watches(n, {});
  });
  watch_count_ = 0;
}

std::vector<WatchId> TreeStore::take_watches() {
  std::vector<WatchId> out;
  each(root_, [&out](Node* n) {
    const auto w = watches_of(n);
    for (auto id : {w.data, w.children})
      if (id) out.push_back(id);
    if (has_watches(n)) put_watches(n, {});
  });
  watch_count_ = 0;
  return out;
}

std::vector<ChildData> TreeStore::remove_subtree(std::string_view path, std::vector<WatchId>& watches) {
  const auto at = locate(path);
  if (!at.slot) return {};
  auto doomed = walk(std::string(path), *at.slot);
  if (at.parent) {
    unplace(at.parent->children, at.slot);
    at.parent->children = fit(at.parent->children, at.parent->children->size);
  } else {
    root_ = nullptr;
  }
  std::vector<ChildData> out;
  out.reserve(doomed.size());
  for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) {  // deepest first
    auto* n = it->second;
    const auto w = watches_of(n);
    for (auto id : {w.data, w.children})
      if (id) watches.push_back(id);
    watch_count_ -= count(w);
    out.push_back({std::move(it->first), stat_of(n), std::string(bytes_of(n))});
    free_table(n->children);
    free_node(n);
    --size_;
  }
  return out;
}

void TreeStore::clear() noexcept {
  free_subtree(root_);
  root_ = nullptr;
  size_ = watch_count_ = 0;
}

}  // namespace zkr::detail
