// The FTS5 tokenizer "kasava": see tokenizer.hpp.
//
// Each word yields itself and, when it splits, its parts ("parseConfig" → parseconfig, parse,
// config), all with the word's byte range. Parts take positions of their own rather than
// being marked FTS5_TOKEN_COLOCATED: a quoted query term is tokenized by this same code into
// the same sequence, so the phrase it becomes matches the document at consecutive positions.
// Colocated parts would instead need the query side to emit only whole words.
#include "core/store/tokenizer.hpp"

#include <sqlite3.h>

#include <cstring>
#include <new>
#include <string_view>

#include "core/util/tokenize.hpp"

namespace kasava::store {
namespace {

// The tokenizer keeps no state; FTS5 still wants a non-null instance pointer.
int g_instance_tag = 0;

int create_tokenizer(void* /*user_data*/, const char** /*arguments*/, int argument_count,
                     Fts5Tokenizer** tokenizer) {
  if (argument_count != 0) return SQLITE_ERROR;  // "kasava" takes no options
  *tokenizer = reinterpret_cast<Fts5Tokenizer*>(&g_instance_tag);
  return SQLITE_OK;
}

void delete_tokenizer(Fts5Tokenizer* /*tokenizer*/) {}

int tokenize_entry(Fts5Tokenizer* /*tokenizer*/, void* context, int flags, const char* text,
                   int size, TokenCallback callback) {
  return tokenize(context, flags, text, size, callback);
}

} // namespace

int tokenize(void* context, int /*flags*/, const char* text, int size, TokenCallback callback) {
  if (text == nullptr) return SQLITE_OK;
  if (size < 0) size = static_cast<int>(std::strlen(text));
  int result = SQLITE_OK;
  // No exception may cross into SQLite's C frames.
  try {
    util::for_each_code_token(std::string_view(text, static_cast<std::size_t>(size)),
                              [&](std::string_view token, std::size_t begin, std::size_t end) {
                                if (result != SQLITE_OK) return;
                                result = callback(context, 0, token.data(),
                                                  static_cast<int>(token.size()),
                                                  static_cast<int>(begin), static_cast<int>(end));
                              });
  } catch (const std::bad_alloc&) {
    result = SQLITE_NOMEM;
  } catch (...) {
    result = SQLITE_ERROR;
  }
  return result;
}

std::string register_tokenizer(sqlite3* db) {
  // The documented way to reach the FTS5 API: SELECT fts5(?1) with a typed pointer binding.
  fts5_api* api = nullptr;
  sqlite3_stmt* statement = nullptr;
  int result = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, nullptr);
  if (result == SQLITE_OK) {
    sqlite3_bind_pointer(statement, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    result = sqlite3_step(statement);
  }
  std::string error = (result == SQLITE_OK || result == SQLITE_ROW) ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(statement);
  if (!error.empty()) return "full-text search (fts5) is unavailable: " + error;
  if (api == nullptr || api->iVersion < 2) {
    return "full-text search (fts5) is unavailable in this sqlite library";
  }
  static fts5_tokenizer methods{create_tokenizer, delete_tokenizer, tokenize_entry};
  result = api->xCreateTokenizer(api, k_tokenizer_name, nullptr, &methods, nullptr);
  if (result != SQLITE_OK) {
    return std::string("registering the fts5 tokenizer: ") + sqlite3_errstr(result);
  }
  return "";
}

} // namespace kasava::store
