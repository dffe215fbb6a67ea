// libFuzzer target: the native transport's decoders (framework/src/native/jute.cpp, records.cpp) on arbitrary
// server bytes. The first byte picks what the rest is read as: a frame length, a ConnectResponse, a
// notification, or the reply to one of the seam's request kinds. Any input must end in a value or
// client_errc::malformed_reply: never a crash, an out-of-bounds read or an allocation the input cannot back.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "native/jute.hpp"
#include "native/records.hpp"

namespace native = zkr::detail::native;
namespace zk = zkr::detail::zk;

namespace {

zk::Request request_for(std::uint8_t pick) {
  switch (pick % 9) {
    case 0:
      return zk::Create{"/a", "", {}, zkr::CreateMode::persistent, 0};
    case 1:
      return zk::Exists{"/a", 1};
    case 2:
      return zk::GetData{"/a", 1};
    case 3:
      return zk::GetChildren{"/a", 1};
    case 4:
      return zk::SetData{"/a", "", -1};
    case 5:
      return zk::GetAcl{"/a"};
    case 6:
      return zk::Sync{"/a"};
    case 7:
      return zk::Multi{{zkr::Op::create("/a"), zkr::Op::set_data("/a", "x"), zkr::Op::remove("/a")}};
    default:
      return zk::Delete{"/a", -1};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t pick = data[0];
  const native::jute::ByteSpan in(data + 1, size - 1);
  native::jute::Reader r(in);
  switch (pick % 4) {
    case 0: {
      zkr::error_code ec;
      const auto len = native::jute::frame_length(in, native::jute::max_buffer, ec);
      if (ec && len != -1) std::abort();
      break;
    }
    case 1:
      (void)native::decode_connect_response(r);
      break;
    case 2:
      (void)native::decode_reply_header(r);
      (void)native::decode_watcher_event(r);
      break;
    default: {
      const auto h = native::decode_reply_header(r);
      zk::Reply reply;
      native::decode_reply(r, request_for(static_cast<std::uint8_t>(pick >> 2)), reply);
      if (r.error() && r.error() != zkr::client_errc::malformed_reply) std::abort();
      (void)h;
      break;
    }
  }
  if (r.remaining() > in.size()) std::abort();
  return 0;
}
