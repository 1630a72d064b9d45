// The FTS5 tokenizer "kasava": see tokenizer.hpp.
//
// Each word yields itself and, when it splits, its parts ("parseConfig" → parseconfig, parse,
// config), all with the word's byte range. Parts take positions of their own rather than
// being marked FTS5_TOKEN_COLOCATED: a quoted query term is tokenized by this same code into
// the same sequence, so the phrase it becomes matches the document at consecutive positions.
// Colocated parts would instead need the query side to emit only whole words.
//
// A connection may register it with a TokenCount, which then counts every token it emits
// (the store learns a chunk's length that way, see chunk_lengths.hpp).
#include "core/store/tokenizer.hpp"

#include <cstring>
#include <new>
#include <string_view>

#include "core/store/sqlite.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::store {
namespace {

// The instance of a connection registered without a TokenCount; FTS5 wants a non-null pointer.
int g_instance_tag = 0;

// The instance is the connection's TokenCount (registration's user data), or the tag.
int create_tokenizer(void* user_data, const char** /*arguments*/, int argument_count,
                     Fts5Tokenizer** tokenizer) {
  if (argument_count != 0) return SQLITE_ERROR;  // "kasava" takes no options
  *tokenizer = reinterpret_cast<Fts5Tokenizer*>(user_data != nullptr ? user_data : &g_instance_tag);
  return SQLITE_OK;
}

void delete_tokenizer(Fts5Tokenizer* /*tokenizer*/) {}

int tokenize_into(void* context, const char* text, int size, TokenCallback callback,
                  TokenCount* count) {
  if (text == nullptr) return SQLITE_OK;
  if (size < 0) size = static_cast<int>(std::strlen(text));
  int result = SQLITE_OK;
  // No exception may cross into SQLite's C frames.
  try {
    util::for_each_code_token(std::string_view(text, static_cast<std::size_t>(size)),
                              [&](std::string_view token, std::size_t begin, std::size_t end) {
                                if (result != SQLITE_OK) return;
                                if (count != nullptr) ++count->tokens;
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

int tokenize_entry(Fts5Tokenizer* tokenizer, void* context, int /*flags*/, const char* text,
                   int size, TokenCallback callback) {
  auto* count = reinterpret_cast<void*>(tokenizer) == &g_instance_tag
                    ? nullptr
                    : reinterpret_cast<TokenCount*>(tokenizer);
  return tokenize_into(context, text, size, callback, count);
}

} // namespace

int tokenize(void* context, int /*flags*/, const char* text, int size, TokenCallback callback) {
  return tokenize_into(context, text, size, callback, nullptr);
}

std::string register_tokenizer(sqlite3* db, TokenCount* count) {
  std::string error;
  fts5_api* api = sqlite::fts5_api_of(db, error);
  if (api == nullptr) return error;
  static fts5_tokenizer methods{create_tokenizer, delete_tokenizer, tokenize_entry};
  const int result = api->xCreateTokenizer(api, k_tokenizer_name, count, &methods, nullptr);
  if (result != SQLITE_OK) {
    return std::string("registering the fts5 tokenizer: ") + sqlite3_errstr(result);
  }
  return "";
}

} // namespace kasava::store
