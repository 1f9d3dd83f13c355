// WidenListenBacklog: a deeper accept queue for a socket that already listens.
//
// Debian's cpp-httplib (0.11, a shared library) listens with a backlog of 5. A burst of more new
// connections than that overflows the accept queue; the kernel drops the extra SYNs, and clients
// send them again only a second later. Linux lets listen() be called again on a listening socket
// to change its backlog, which is what this does.
#pragma once

namespace slurmfleet {

// To SOMAXCONN. A failure is ignored: the narrow queue still works, only slower under bursts.
void WidenListenBacklog(int fd);

}  // namespace slurmfleet
