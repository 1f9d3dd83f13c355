#include "base/allocator_tuning.h"

#include <malloc.h>

namespace slurmfleet {

bool TuneAllocatorForDaemon() {
  bool ok = true;
  // Buffers of 256 KiB and more get their own mapping, given back to the system when freed.
  // Setting the threshold also turns off its dynamic growth.
  ok &= mallopt(M_MMAP_THRESHOLD, 256 * 1024) == 1;
  // Free memory at the top of the heap is given back past 1 MiB, not 128 KiB x growth.
  ok &= mallopt(M_TRIM_THRESHOLD, 1024 * 1024) == 1;
  // The engine's submit and tracking helpers would otherwise each get an arena of their own.
  ok &= mallopt(M_ARENA_MAX, 2) == 1;
  return ok;
}

}  // namespace slurmfleet
