// AdviseHugePages: asks the kernel to back a large buffer with transparent huge pages, so that
// writing it the first time faults it in 2 MiB at a time instead of 4 KiB. A full job list's
// decoded jobs (600 bytes each, 7 MB at 12,000 jobs) fill a buffer that is mapped afresh for
// every list: in 4 KiB pages that is about 1,800 page faults a list, each a trap into the kernel
// (and, in a VM, into the hypervisor).
#pragma once

#include <cstddef>

namespace slurmfleet {

// Advises the whole 2 MiB pages within [data, data + bytes), when `bytes` is at least 4 MiB:
// from that size the daemon's allocator maps each buffer on its own (base/allocator_tuning.h),
// so the advice covers that mapping and nothing beside it. Best effort: nothing happens where
// transparent huge pages are turned off, or on a system without them.
void AdviseHugePages(void* data, size_t bytes);

}  // namespace slurmfleet
