// TuneAllocatorForDaemon: glibc malloc settings for a long-running daemon whose passes allocate
// large transient buffers (a full job list is about 10 KB per job) from several threads.
//
// With glibc's defaults the dynamic mmap threshold climbs to 32 MB after the first large free,
// so later buffers come from the heap and, interleaved with long-lived small allocations, stay
// resident after they are freed; every thread that allocates may also get an arena of its own.
// Measured with bench/engine_bench at 2,000 jobs (14,000 in slurmctld): 143 MiB resident after
// the passes with the defaults, 34 MiB with a fixed 256 KiB mmap threshold, which however made
// every pass fault in its buffers afresh (a light pass at 10,000 jobs: 29 ms of CPU). With these
// settings at 10,000 jobs (12,000 in slurmctld): 43.6 MiB after the passes, 52.1 MiB at the
// peak, a light pass 22 ms.
#pragma once

namespace slurmfleet {

// Call once, at the start of main, before any threads start. Returns false if glibc refused a
// setting (the defaults then stay in effect; nothing else changes).
bool TuneAllocatorForDaemon();

}  // namespace slurmfleet
