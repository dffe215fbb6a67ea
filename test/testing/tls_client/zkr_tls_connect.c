/* zkr_tls_connect HOST:PORT CERTS SECONDS [PATH]
 *
 * One session of the single-threaded ZooKeeper C client over TLS (zookeeper_init_ssl, CERTS as
 * "CA,CERT,KEY[,PASSWORD]"), for the TLS tests of zkr::testing. Once connected it creates the ephemeral node
 * PATH (default /zkr-tls-connect) with ZOO_CREATOR_ALL_ACL, prints its ACL ("acl <scheme>:<id>"), deletes it
 * and exits 0. Exits 2 when no session is made within SECONDS (the C client retries a refused handshake
 * forever and tells no watcher: this program is the one that gives up), printing the last error of
 * zookeeper_process; 3 when an operation fails. A SIGALRM 10 s after SECONDS bounds the run even if
 * the handshake blocks inside zookeeper_process. SIGPIPE is ignored: the C client's TLS writes can raise it.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

static int connected;
static int done;
static int failed;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_delete(int rc, const void *data) {
  (void)data;
  printf("delete rc=%d\n", rc);
  failed |= rc != ZOK;
  done = 1;
}

static void on_acl(int rc, struct ACL_vector *acl, struct Stat *stat, const void *data) {
  (void)stat;
  zhandle_t *zh = (zhandle_t *)data;
  for (int i = 0; rc == ZOK && i < acl->count; ++i)
    printf("acl %s:%s perms=%d\n", acl->data[i].id.scheme, acl->data[i].id.id, acl->data[i].perms);
  failed |= rc != ZOK;
  if (rc != ZOK || zoo_adelete(zh, zoo_get_context(zh), -1, on_delete, NULL) != ZOK) done = failed = 1;
}

static void on_create(int rc, const char *path, const void *data) {
  zhandle_t *zh = (zhandle_t *)data;
  printf("create rc=%d\n", rc);
  if (rc != ZOK || zoo_aget_acl(zh, path, on_acl, zh) != ZOK) done = failed = 1;
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *context) {
  (void)path;
  if (type != ZOO_SESSION_EVENT || state != ZOO_CONNECTED_STATE || connected) return;
  connected = 1;
  printf("connected\n");
  if (zoo_acreate(zh, (const char *)context, "tls", 3, &ZOO_CREATOR_ALL_ACL, ZOO_EPHEMERAL, on_create, zh) !=
      ZOK)
    done = failed = 1;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: %s HOST:PORT CA,CERT,KEY[,PASSWORD] SECONDS [PATH]\n", argv[0]);
    return 64;
  }
  const int seconds = atoi(argv[3]);
  signal(SIGPIPE, SIG_IGN);
  alarm((unsigned)seconds + 10);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t *zh =
      zookeeper_init_ssl(argv[1], argv[2], watcher, 10000, NULL, argc == 5 ? argv[4] : "/zkr-tls-connect", 0);
  if (!zh) {
    perror("zookeeper_init_ssl");
    return 1;
  }
  const double deadline = now() + seconds;
  int last_rc = ZOK;
  while (!done && now() < deadline) {
    int fd = -1, interest = 0;
    struct timeval tv;
    zookeeper_interest(zh, &fd, &interest, &tv);
    int ms = (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
    if (ms > 100) ms = 100;
    struct pollfd p = {
        fd, (short)((interest & ZOOKEEPER_READ ? POLLIN : 0) | (interest & ZOOKEEPER_WRITE ? POLLOUT : 0)),
        0};
    if (fd < 0) {
      poll(NULL, 0, ms);
      continue;
    }
    if (poll(&p, 1, ms) < 0) continue;
    const int events = (p.revents & (POLLIN | POLLHUP | POLLERR) ? ZOOKEEPER_READ : 0) |
                       (p.revents & (POLLOUT | POLLHUP | POLLERR) ? ZOOKEEPER_WRITE : 0);
    const int rc = zookeeper_process(zh, events);
    if (rc != ZOK && rc != ZNOTHING) last_rc = rc;
    if (!connected && last_rc != ZOK) poll(NULL, 0, 1); /* a failing key or CA makes the client spin: yield */
  }
  zookeeper_close(zh);
  if (!connected) {
    printf("no session within %d s, last zookeeper_process rc=%d\n", seconds, last_rc);
    return 2;
  }
  return done && !failed ? 0 : 3;
}
