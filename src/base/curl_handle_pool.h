// CurlHandlePool: libcurl easy handles for reuse, so that concurrent callers each get their own
// handle and every handle keeps its connections alive between requests. Creating the first pool
// initializes libcurl once for the process.
//
// Thread safety: Acquire and Release may be called from any thread.
#pragma once

#include <mutex>
#include <vector>

namespace slurmfleet {

class CurlHandlePool {
 public:
  CurlHandlePool();
  ~CurlHandlePool();  // cleans up every handle it holds; handles out on loan are the caller's

  // A CURL* (void* so that this header needs no curl.h): an idle one, or a new one. The caller
  // resets the options it sets and gives it back with Release. nullptr when libcurl is out of
  // memory.
  void* Acquire();
  void Release(void* handle);

  CurlHandlePool(const CurlHandlePool&) = delete;
  CurlHandlePool& operator=(const CurlHandlePool&) = delete;

 private:
  std::mutex mu_;
  std::vector<void*> idle_;  // guarded by mu_
};

}  // namespace slurmfleet
