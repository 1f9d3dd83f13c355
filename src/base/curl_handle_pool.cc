#include "base/curl_handle_pool.h"

#include <curl/curl.h>

namespace slurmfleet {
namespace {

std::once_flag curl_init_once;

}  // namespace

CurlHandlePool::CurlHandlePool() {
  std::call_once(curl_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CurlHandlePool::~CurlHandlePool() {
  for (void* handle : idle_) curl_easy_cleanup(static_cast<CURL*>(handle));
}

void* CurlHandlePool::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      void* handle = idle_.back();
      idle_.pop_back();
      return handle;
    }
  }
  return curl_easy_init();
}

void CurlHandlePool::Release(void* handle) {
  std::lock_guard lock(mu_);
  idle_.push_back(handle);
}

}  // namespace slurmfleet
