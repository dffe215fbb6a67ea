/* Round-trip cost of the ZooKeeper C client, single-threaded (driven by select) vs multi-threaded (sync and
 * async). The numbers behind the client choice in docs/architecture.md. The two -dev packages conflict, so
 * build each against the one installed:
 *   gcc -O2 bench/c_client_roundtrip.c -o rt_st -lzookeeper_st
 *   gcc -O2 -DTHREADED bench/c_client_roundtrip.c -o rt_mt -lzookeeper_mt
 *   ./rt_st 127.0.0.1:2181 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>
static double now() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void* a, const void* b) {
  double x = *(double*)a, y = *(double*)b;
  return x < y ? -1 : x > y;
}
static volatile int done;
static int connected;
static void w(zhandle_t* zh, int type, int state, const char* p, void* c) {
  if (state == ZOO_CONNECTED_STATE) connected = 1;
}
static void scb(int rc, const char* v, const void* d) { done = 1; }
static void vcb(int rc, const void* d) { done = 1; }
#define N 3000
double s[N];
#ifdef THREADED
#define WAIT()    \
  while (!done) { \
    usleep(0);    \
  }
#else
static zhandle_t* Z;
static void pump() {
  int fd, ev;
  struct timeval tv;
  zookeeper_interest(Z, &fd, &ev, &tv);
  fd_set r, wr;
  FD_ZERO(&r);
  FD_ZERO(&wr);
  if (fd >= 0) {
    if (ev & ZOOKEEPER_READ) FD_SET(fd, &r);
    if (ev & ZOOKEEPER_WRITE) FD_SET(fd, &wr);
  }
  select(fd + 1, &r, &wr, 0, &tv);
  int e = 0;
  if (fd >= 0) {
    if (FD_ISSET(fd, &r)) e |= ZOOKEEPER_READ;
    if (FD_ISSET(fd, &wr)) e |= ZOOKEEPER_WRITE;
  }
  zookeeper_process(Z, e);
}
#define WAIT()    \
  while (!done) { \
    pump();       \
  }
#endif
int main(int c, char** v) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t* zh = zookeeper_init(v[1], w, 10000, 0, 0, 0);
#ifndef THREADED
  Z = zh;
  while (!connected) pump();
#else
  while (!connected) usleep(1000);
#endif
  char buf[256];
  for (int rep = 0; rep < 2; rep++) {
    // async lock pair: create eph seq, get_children, delete
    for (int i = 0; i < N; i++) {
      double t = now();
      done = 0;
      zoo_acreate(zh, "/b-", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, scb, 0);
      WAIT();
      done = 0;
      zoo_aexists(zh, "/", 0, (stat_completion_t)vcb, 0);
      WAIT();
      done = 0;
      zoo_adelete(zh, "/b-0", -1, vcb, 0);
      WAIT();
      s[i] = now() - t;
    }
    qsort(s, N, sizeof(double), cmp);
    printf("async 3-request pair p50=%.0fus p99=%.0fus\n", s[N / 2], s[N * 99 / 100]);
    for (int i = 0; i < N; i++) {
      double t = now();
      done = 0;
      zoo_aexists(zh, "/", 0, (stat_completion_t)vcb, 0);
      WAIT();
      s[i] = now() - t;
    }
    qsort(s, N, sizeof(double), cmp);
    printf("async read p50=%.0fus p99=%.0fus\n", s[N / 2], s[N * 99 / 100]);
#ifdef THREADED
    for (int i = 0; i < N; i++) {
      double t = now();
      struct Stat st;
      zoo_exists(zh, "/", 0, &st);
      s[i] = now() - t;
    }
    qsort(s, N, sizeof(double), cmp);
    printf("sync read p50=%.0fus p99=%.0fus\n", s[N / 2], s[N * 99 / 100]);
    for (int i = 0; i < N; i++) {
      double t = now();
      zoo_create(zh, "/c-", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, buf, 256);
      struct Stat st;
      zoo_exists(zh, "/", 0, &st);
      zoo_delete(zh, buf, -1);
      s[i] = now() - t;
    }
    qsort(s, N, sizeof(double), cmp);
    printf("sync 3-request pair p50=%.0fus p99=%.0fus\n", s[N / 2], s[N * 99 / 100]);
#endif
  }
  zookeeper_close(zh);
}
