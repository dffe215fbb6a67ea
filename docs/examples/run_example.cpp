// Starts a local ZooKeeper (zkr::testing::TestingServer on 127.0.0.1), runs an example with its connect
// string as the first argument, and exits with the example's status.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>
#include <zkr/testing/testing_server.hpp>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: zkr_example_runner EXAMPLE [ARGS...]\n");
    return 64;
  }
  try {
    zkr::testing::TestingServer server;
    std::string connect = server.connect_string();
    std::vector<char*> args{argv[1], connect.data()};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execv(argv[1], args.data());
      std::perror("execv");
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zkr_example_runner: %s\n", e.what());
    return 1;
  }
}
