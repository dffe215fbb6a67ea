#pragma once
// An independent grant checker for the fault, interop and soak tests: it knows nothing of the library. Each
// holder reports what it was granted (lock id, holder id, exclusive or shared, fencing token) and when its
// hold began and ended, on the steady clock; the checker then judges the history:
//   - exclusion: never two exclusive grants of one lock at once, nor a shared grant with an exclusive one;
//   - tokens: strictly increasing per lock, in grant (start) order;
//   - fencing: a checker-owned "last token" store per lock (`fenced_write`) rejects a write carrying a token
//     older than the newest it has accepted, which is how a resource survives a holder that lost its lock
//     without knowing (paused process, expired session).
// A grant the test knows was voided by a fault (`mark_lost`) is exempt from the exclusion rule from the
// moment it was lost, and from the token order when that was before it began: ZooKeeper cannot stop a holder
// that does not know it lost its session, which is what the fence is for. Everything is thread-safe.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zkr::test {

class GrantChecker {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Kind { exclusive, shared };

  struct Grant {
    std::string lock;
    std::string holder;
    Kind kind = Kind::exclusive;
    std::int64_t token = 0;
    Clock::time_point start;
    std::optional<Clock::time_point> end;   // nullopt while held
    std::optional<Clock::time_point> lost;  // set by mark_lost: no longer counts as a holder from then on
  };

  /// Records a grant starting now (call right after the acquire returned); returns its id for `end`.
  std::size_t begin(const std::string& lock, const std::string& holder, Kind kind, std::int64_t token) {
    return add(lock, holder, kind, token, Clock::now(), std::nullopt);
  }
  /// Records the end of a grant (call right before the release).
  void end(std::size_t id) {
    std::lock_guard lk(m_);
    if (id < grants_.size() && !grants_[id].end) grants_[id].end = Clock::now();
  }
  /// The grant was voided by a fault at `at` (its session expired, its process was paused past the session
  /// timeout): from then on it no longer counts as a holder. Pass the time the fault was injected when known
  /// (the holder itself learns of the loss later, which is what the fence is for).
  void mark_lost(std::size_t id, std::optional<Clock::time_point> at = std::nullopt) {
    std::lock_guard lk(m_);
    if (id >= grants_.size()) return;
    auto t = at.value_or(Clock::now());
    if (!grants_[id].lost || t < *grants_[id].lost) grants_[id].lost = t;
  }
  /// A complete grant observed elsewhere (e.g. the Java peer's log), with wall-clock times.
  /// Returns its id (for `mark_lost`).
  std::size_t add_external(const std::string& lock, const std::string& holder, Kind kind, std::int64_t token,
                           std::chrono::system_clock::time_point start,
                           std::chrono::system_clock::time_point end) {
    return add(lock, holder, kind, token, to_steady(start), to_steady(end));
  }
  /// Counts a fault the test injected.
  void fault(const std::string& what) {
    std::lock_guard lk(m_);
    faults_.push_back(what);
  }
  /// The fenced resource: accepts a write carrying `token` unless a larger token was accepted before.
  bool fenced_write(const std::string& lock, std::int64_t token) {
    std::lock_guard lk(m_);
    auto& last = fence_[lock];
    if (token < last) {
      ++fence_rejections_;
      return false;
    }
    last = token;
    ++fence_writes_;
    return true;
  }
  /// Records a violation found by the test itself (e.g. a late write that the fence accepted).
  void violation(const std::string& what) {
    std::lock_guard lk(m_);
    extra_violations_.push_back(what);
  }

  /// Judges the whole history; one line per violation.
  std::vector<std::string> violations() const {
    std::lock_guard lk(m_);
    std::vector<std::string> out = extra_violations_;
    const auto now = Clock::now();
    std::map<std::string, std::vector<const Grant*>> by_lock;
    for (auto& g : grants_) by_lock[g.lock].push_back(&g);
    for (auto& [lock, gs] : by_lock) {
      std::stable_sort(gs.begin(), gs.end(), [](auto* a, auto* b) { return a->start < b->start; });
      // Tokens strictly increase in grant order (shared grants may share nothing either: every node is new).
      // A grant voided before it began (its session expired by a fault while the acquire was still returning
      // it) held nothing: it is exempt here as from the exclusion rule, and the fence stops its writes.
      std::vector<const Grant*> live;
      for (auto* g : gs)
        if (!(g->lost && *g->lost <= g->start)) live.push_back(g);
      for (std::size_t i = 1; i < live.size(); ++i) {
        const Grant& before = *live[i - 1];
        const Grant& g = *live[i];
        if (g.token <= before.token)
          out.push_back("lock " + lock + ": token " + std::to_string(g.token) + " of " + g.holder +
                        " does not exceed " + std::to_string(before.token) + " of " + before.holder);
      }
      // Exclusion: for each pair that overlaps in time, at least one must be lost by then, or both shared.
      for (std::size_t i = 0; i < gs.size(); ++i) {
        const auto end_i = effective_end(*gs[i], now);
        for (std::size_t j = i + 1; j < gs.size() && gs[j]->start < end_i; ++j) {
          if (gs[i]->kind == Kind::shared && gs[j]->kind == Kind::shared) continue;
          if (gs[j]->start >= effective_end(*gs[j], now)) continue;
          out.push_back("lock " + lock + ": " + gs[j]->holder + " (token " + std::to_string(gs[j]->token) +
                        ") granted while " + gs[i]->holder + " (token " + std::to_string(gs[i]->token) +
                        ") still held it");
        }
      }
    }
    return out;
  }

  std::size_t grants() const {
    std::lock_guard lk(m_);
    return grants_.size();
  }
  std::size_t faults() const {
    std::lock_guard lk(m_);
    return faults_.size();
  }
  std::size_t fence_rejections() const {
    std::lock_guard lk(m_);
    return fence_rejections_;
  }
  std::vector<Grant> history() const {
    std::lock_guard lk(m_);
    return grants_;
  }

  /// "checker: N grants, F faults, V violations" (+ fence counts); also printed to stdout by `report`.
  std::string summary() const {
    const auto v = violations().size();
    std::lock_guard lk(m_);
    return "checker: " + std::to_string(grants_.size()) + " grants, " + std::to_string(faults_.size()) +
           " faults, " + std::to_string(v) + " violations (fenced writes " + std::to_string(fence_writes_) +
           " accepted, " + std::to_string(fence_rejections_) + " rejected)";
  }
  /// Prints `summary()` prefixed by `label` and returns the violations.
  std::vector<std::string> report(const std::string& label) const {
    auto v = violations();
    std::printf("%s %s\n", label.c_str(), summary().c_str());
    for (auto& s : v) std::printf("  violation: %s\n", s.c_str());
    std::fflush(stdout);
    return v;
  }

 private:
  static Clock::time_point effective_end(const Grant& g, Clock::time_point now) {
    auto e = g.end.value_or(now);
    if (g.lost && *g.lost < e) e = *g.lost;
    return e;
  }
  Clock::time_point to_steady(std::chrono::system_clock::time_point t) const {
    return steady_base_ + std::chrono::duration_cast<Clock::duration>(t - system_base_);
  }
  std::size_t add(const std::string& lock, const std::string& holder, Kind kind, std::int64_t token,
                  Clock::time_point start, std::optional<Clock::time_point> end) {
    std::lock_guard lk(m_);
    grants_.push_back(Grant{lock, holder, kind, token, start, end, std::nullopt});
    return grants_.size() - 1;
  }

  mutable std::mutex m_;
  std::vector<Grant> grants_;
  std::vector<std::string> faults_;
  std::vector<std::string> extra_violations_;
  std::map<std::string, std::int64_t> fence_;
  std::size_t fence_writes_ = 0;
  std::size_t fence_rejections_ = 0;
  const Clock::time_point steady_base_ = Clock::now();
  const std::chrono::system_clock::time_point system_base_ = std::chrono::system_clock::now();
};

}  // namespace zkr::test
