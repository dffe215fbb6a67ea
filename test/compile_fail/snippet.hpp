#pragma once
// The API checks (test/CMakeLists.txt, tests api.*): each discard_*.cpp drops the result of one call whose
// result must be used, and must NOT compile under -Werror=unused-result. use_results.cpp includes every one
// of them with `ZKR_SNIPPET` using the value instead, and must compile: so a snippet fails for the discarded
// result alone, not for a mistake of its own.

#include <chrono>
#include <zkr/zkrecipes.hpp>

#ifndef ZKR_SNIPPET
#define ZKR_SNIPPET(expr) expr
#endif

using namespace std::chrono_literals;
