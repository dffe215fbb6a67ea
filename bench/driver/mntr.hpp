#pragma once
// ZooKeeper's own counters (`mntr`, a four-letter word on the plain port), read around a measured part.

#include <map>
#include <optional>
#include <string>

#include "json.hpp"

namespace zkr_bench {

using MntrSample = std::map<std::string, double>;

/// The numeric lines of `mntr` from `address` (host:port); nullopt with `error` set when it cannot be read.
std::optional<MntrSample> read_mntr(const std::string& address, std::string& error);

/// The counters before and after a measured part, and their differences as the output's extra.mntr.
class MntrWindow {
 public:
  /// `address` empty: no --mntr, nothing is read.
  explicit MntrWindow(std::string address) : address_(std::move(address)) {}

  bool enabled() const { return !address_.empty(); }
  /// One sample now, nullopt (the error kept) when it cannot be read or without --mntr.
  std::optional<MntrSample> sample();
  /// One counter now (-1 when it cannot be read).
  double value(const char* key);
  void begin() { before_ = sample(); }
  void end() { after_ = sample(); }
  /// Replaces the window by sums taken over several windows (failover): before all zero, after the sums.
  void set_sums(const MntrSample& sums);
  /// Records that a window had no sample (its error, or "no mntr sample").
  void note_missing();
  bool has_error() const { return !error_.empty(); }
  /// extra.mntr: reads, writes, watch_events, packets_received; or {"error": ...}.
  Json delta() const;

 private:
  std::string address_;
  std::optional<MntrSample> before_, after_;
  std::string error_;
};

}  // namespace zkr_bench
