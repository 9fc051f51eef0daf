#pragma once
// libcurl, loaded at first use with dlopen rather than linked, so that a kvault binary
// starts (and verifies kernels) on machines without libcurl; only LLM calls need it.
// Tries libcurl.so.4 (OpenSSL flavour), then libcurl-gnutls.so.4, then libcurl.so.
// curl_global_init runs once. Thread-safe.
#include <curl/curl.h>

#include "util/result.h"

namespace kvault::llm {

struct CurlApi {
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The loaded library, or an Error naming what is missing ("libcurl not found: install
// the libcurl4 package"). The answer is computed once and then returned every time.
Result<const CurlApi*> LoadCurl();

}  // namespace kvault::llm
