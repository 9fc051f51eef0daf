#include "llm/curl_library.h"

#include <dlfcn.h>

#include <string>

namespace kvault::llm {
namespace {

template <class F>
bool Resolve(void* lib, const char* name, F*& out, std::string* missing) {
  out = reinterpret_cast<F*>(dlsym(lib, name));
  if (!out) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return out != nullptr;
}

Result<const CurlApi*> Load() {
  static CurlApi api;
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
  }
  if (!lib) return Error{"libcurl not found (install the libcurl4 package): " + tried};
  std::string missing;
  CURLcode (*global_init)(long) = nullptr;
  Resolve(lib, "curl_global_init", global_init, &missing);
  Resolve(lib, "curl_easy_init", api.easy_init, &missing);
  Resolve(lib, "curl_easy_setopt", api.easy_setopt, &missing);
  Resolve(lib, "curl_easy_perform", api.easy_perform, &missing);
  Resolve(lib, "curl_easy_getinfo", api.easy_getinfo, &missing);
  Resolve(lib, "curl_easy_cleanup", api.easy_cleanup, &missing);
  Resolve(lib, "curl_easy_strerror", api.easy_strerror, &missing);
  Resolve(lib, "curl_slist_append", api.slist_append, &missing);
  Resolve(lib, "curl_slist_free_all", api.slist_free_all, &missing);
  if (!missing.empty()) return Error{"libcurl lacks " + missing};
  if (CURLcode rc = global_init(CURL_GLOBAL_ALL); rc != CURLE_OK) {
    return Error{std::string("curl_global_init failed: ") + api.easy_strerror(rc)};
  }
  return &api;  // the library stays loaded for the life of the process
}

}  // namespace

Result<const CurlApi*> LoadCurl() {
  static const Result<const CurlApi*> loaded = Load();  // thread-safe static init
  return loaded;
}

}  // namespace kvault::llm
