// HttpClient over libcurl's easy interface. The only file of kasava that includes curl.h.
// Each send() borrows an easy handle from a pool; curl_easy_reset() keeps a handle's live
// connections, so consecutive requests to one host reuse TCP and TLS sessions.
//
// libcurl is loaded (dlopen) when the first client is made, not when kasava starts: it and the
// twenty libraries it brings (TLS, Kerberos, LDAP, RTMP, …) cost every process about 7M
// cycles of dynamic loading and relocation (LD_DEBUG=statistics: 17M for the whole binary),
// ~2 ms on each `ask`, while only remote models and written answers use HTTP.
#include "core/net/curl_client.hpp"

#include <curl/curl.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/util/shared_library.hpp"
#include "core/util/strings.hpp"

namespace kasava::net {
namespace {

// The libcurl functions kasava calls, resolved from the shared library at first use.
struct CurlApi {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_reset) easy_reset = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_perform) easy_perform = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
  std::string error;  ///< why libcurl is not usable; "" when it is
};

// The soname of the libcurl kasava is built against (Debian: libcurl4).
constexpr const char* k_libcurl = "libcurl.so.4";

const CurlApi& curl() {
  static const CurlApi api = [] {
    CurlApi loaded;
    util::SharedLibrary library(k_libcurl, "libcurl",
                                "remote models and answers need libcurl (Debian: apt-get install libcurl4)");
    library.resolve(loaded.global_init, "curl_global_init");
    library.resolve(loaded.easy_init, "curl_easy_init");
    library.resolve(loaded.easy_cleanup, "curl_easy_cleanup");
    library.resolve(loaded.easy_reset, "curl_easy_reset");
    library.resolve(loaded.easy_setopt, "curl_easy_setopt");
    library.resolve(loaded.easy_perform, "curl_easy_perform");
    library.resolve(loaded.easy_strerror, "curl_easy_strerror");
    library.resolve(loaded.slist_append, "curl_slist_append");
    library.resolve(loaded.slist_free_all, "curl_slist_free_all");
    loaded.error = library.error();
    if (loaded.error.empty() && loaded.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      loaded.error = std::string("initialising ") + k_libcurl + " failed";
    }
    return loaded;
  }();
  return api;
}

struct EasyDeleter {
  void operator()(CURL* handle) const { curl().easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl().slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

/// Appends a line; curl_slist_append returns the head, which is new only for the first line.
void append(Slist& list, const std::string& line) {
  curl_slist* head = curl().slist_append(list.get(), line.c_str());
  if (head != nullptr && head != list.get()) list.reset(head);
}

/// State shared with curl's callbacks during one transfer.
struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  std::size_t streamed = 0;
  bool too_large = false;
  bool stopped_by_callback = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  const std::string_view chunk(data, bytes);
  if (transfer->request->on_data && transfer->response.status >= 200 &&
      transfer->response.status < 300) {
    transfer->streamed += bytes;
    if (!transfer->request->on_data(chunk)) {
      transfer->stopped_by_callback = true;
      return 0;
    }
    return bytes;
  }
  // Error bodies of streaming requests are kept: they explain the status.
  if (transfer->response.body.size() + bytes > transfer->request->max_body_bytes) {
    transfer->too_large = true;
    return 0;
  }
  transfer->response.body.append(chunk);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  std::string_view line(data, bytes);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    // A new status line (after 100 Continue or a redirect): start over.
    transfer->response.headers.clear();
    const std::size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      int status = 0;
      for (std::size_t i = space + 1; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i)
        status = status * 10 + (line[i] - '0');
      transfer->response.status = status;
    }
    return bytes;
  }
  const std::size_t colon = line.find(':');
  if (colon != std::string_view::npos)
    transfer->response.headers.push_back({std::string(util::trim(line.substr(0, colon))),
                                          std::string(util::trim(line.substr(colon + 1)))});
  return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* transfer = static_cast<Transfer*>(user);
  const auto* cancel = transfer->request->cancel;
  return cancel != nullptr && cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

FailureKind classify(CURLcode code) {
  switch (code) {
    case CURLE_OK:
      return FailureKind::none;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return FailureKind::connect;
    case CURLE_OPERATION_TIMEDOUT:
      return FailureKind::timeout;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return FailureKind::reset;
    case CURLE_ABORTED_BY_CALLBACK:
      return FailureKind::cancelled;
    default:
      return FailureKind::other;
  }
}

class CurlClient final : public HttpClient {
public:
  explicit CurlClient(CurlOptions options) : m_options(std::move(options)) {}

  HttpOutcome send(const HttpRequest& request) override {
    HttpOutcome outcome;
    const std::string where = request.method + " " + display_url(request.url);
    if (const std::string& unusable = curl().error; !unusable.empty()) {
      outcome.failure = FailureKind::other;
      outcome.error = where + ": " + unusable;
      return outcome;
    }
    EasyHandle handle = borrow();
    if (!handle) {
      outcome.failure = FailureKind::other;
      outcome.error = where + ": cannot create a libcurl handle";
      return outcome;
    }
    CURL* easy = handle.get();
    Transfer transfer;
    transfer.request = &request;

    Slist headers;
    for (const Header& h : request.headers) append(headers, h.name + ": " + h.value);
    // Without this, curl waits up to a second for "100 Continue" before sending large bodies.
    append(headers, "Expect:");

    char error_buffer[CURL_ERROR_SIZE] = {};
    curl().easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
    curl().easy_setopt(easy, CURLOPT_URL, request.url.c_str());
    curl().easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl().easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl().easy_setopt(easy, CURLOPT_USERAGENT, m_options.user_agent.c_str());
    curl().easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl().easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());
    if (request.method == "POST") {
      curl().easy_setopt(easy, CURLOPT_POST, 1L);
      curl().easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      curl().easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    } else if (request.method != "GET") {
      curl().easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (!request.body.empty()) {
        curl().easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
        curl().easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
      }
    }
    curl().easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.timeouts.connect.count()));
    curl().easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeouts.total.count()));
    if (request.timeouts.low_speed_bytes > 0 && request.timeouts.low_speed_time.count() > 0) {
      curl().easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, request.timeouts.low_speed_bytes);
      curl().easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                       static_cast<long>(request.timeouts.low_speed_time.count()));
    }
    curl().easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl().easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
    curl().easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl().easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
    curl().easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl().easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl().easy_setopt(easy, CURLOPT_XFERINFODATA, &transfer);

    const CURLcode code = curl().easy_perform(easy);
    outcome.streamed_bytes = transfer.streamed;
    if (code == CURLE_OK) {
      outcome.response = std::move(transfer.response);
      give_back(std::move(handle));
      return outcome;
    }
    if (transfer.too_large) {
      outcome.failure = FailureKind::too_large;
      outcome.error =
          where + ": response larger than " + std::to_string(request.max_body_bytes) + " bytes";
    } else if (transfer.stopped_by_callback) {
      outcome.failure = FailureKind::cancelled;
      outcome.error = where + ": stopped by the receiver";
    } else {
      outcome.failure = classify(code);
      // libcurl's messages name hosts, ports and timings, never header values; redact anyway
      // in case a server reflected one into something libcurl quotes.
      std::string detail = error_buffer[0] != '\0' ? error_buffer : curl().easy_strerror(code);
      detail = redact(std::move(detail), secret_header_values(request.headers));
      if (!detail.empty() && detail[0] >= 'A' && detail[0] <= 'Z')
        detail[0] = static_cast<char>(detail[0] - 'A' + 'a');  // our messages start lower-case
      if (outcome.failure == FailureKind::cancelled) detail = "cancelled";
      outcome.error = where + ": " + detail;
    }
    // A handle whose transfer failed may hold a broken connection: do not pool it.
    return outcome;
  }

private:
  EasyHandle borrow() {
    {
      std::lock_guard lock(m_mutex);
      if (!m_idle.empty()) {
        EasyHandle handle = std::move(m_idle.back());
        m_idle.pop_back();
        curl().easy_reset(handle.get());
        return handle;
      }
    }
    return EasyHandle(curl().easy_init());
  }

  void give_back(EasyHandle handle) {
    std::lock_guard lock(m_mutex);
    if (m_idle.size() < m_options.max_idle_handles) m_idle.push_back(std::move(handle));
  }

  CurlOptions m_options;
  std::mutex m_mutex;
  std::vector<EasyHandle> m_idle;
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(const CurlOptions& options) {
  return std::make_unique<CurlClient>(options);
}

}  // namespace kasava::net
