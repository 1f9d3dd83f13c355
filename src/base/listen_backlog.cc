#include "base/listen_backlog.h"

#include <sys/socket.h>

namespace slurmfleet {

void WidenListenBacklog(int fd) {
  if (fd >= 0) (void)::listen(fd, SOMAXCONN);
}

}  // namespace slurmfleet
