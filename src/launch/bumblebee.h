/* Internal: the launch layer (src/launch/) puts programs onto a GPU. This
 * part is the client of the bumblebee daemon, which powers the discrete GPU
 * of an Optimus laptop on for as long as a client stays connected. The public
 * entry points are in include/gpukit/optimus.h. */
#ifndef GK_LAUNCH_BUMBLEBEE_H
#define GK_LAUNCH_BUMBLEBEE_H

#include <gpukit/optimus.h>

/* How long gk_bumblebee_connect() waits for the daemon: switching the card on
 * and loading its kernel module takes a few seconds on slow laptops. */
#define GK_BUMBLEBEE_TIMEOUT_MS 10000

/* gk_bumblebee_connect() with its own limit on how long to wait for the
 * daemon to accept and answer (tests use a short one). */
gk_status gk_bumblebee_connect_within(const char *socket_path, int timeout_ms, int *fd_out,
                                      char *why, size_t why_size);

/* Reads the daemon's answer to the request sent on `fd` (the socket at
 * `path`, named in messages) until `deadline_ms` on CLOCK_MONOTONIC, in
 * milliseconds; `timeout_ms` is the limit that deadline came from, for the
 * message when it passes. GK_OK when the daemon said yes; its words go to
 * `why` either way. Leaves `fd` open. */
gk_status gk_bumblebee_read_reply(int fd, const char *path, long long deadline_ms,
                                  int timeout_ms, char *why, size_t why_size);

#endif
