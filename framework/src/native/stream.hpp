#pragma once
// The native session's byte stream: TLS-capable over OpenSSL where this build's native transport has TLS
// (ZKR_HAVE_NATIVE_TLS, from framework/CMakeLists.txt), a plain TCP socket with the same interface otherwise,
// so that a build without TLS neither compiles nor links OpenSSL.

#if defined(ZKR_HAVE_NATIVE_TLS)
#include "tls_stream.hpp"
#else
#include "plain_stream.hpp"
#endif
