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

// The "porter" of a connection with a TermTap: SQLite's own, found before the wrapper was
// registered under its name (the registration's user data, freed with the connection).
struct TappedPorter {
  fts5_tokenizer porter;
  void* porter_data;
  TermTap* tap;
};

// An instance: SQLite's porter instance and its registration.
struct TappedInstance {
  TappedPorter* owner;
  Fts5Tokenizer* porter;
};

// One tokenize call's FTS5 callback, which each term goes on to after the tap.
struct TappedCall {
  void* context;
  TokenCallback callback;
  TermTap* tap;
};

int create_tapped(void* user_data, const char** arguments, int argument_count,
                  Fts5Tokenizer** tokenizer) {
  auto* owner = static_cast<TappedPorter*>(user_data);
  auto* instance = new (std::nothrow) TappedInstance{owner, nullptr};
  if (instance == nullptr) return SQLITE_NOMEM;
  const int result =
      owner->porter.xCreate(owner->porter_data, arguments, argument_count, &instance->porter);
  if (result != SQLITE_OK) {
    delete instance;
    return result;
  }
  *tokenizer = reinterpret_cast<Fts5Tokenizer*>(instance);
  return SQLITE_OK;
}

void delete_tapped(Fts5Tokenizer* tokenizer) {
  auto* instance = reinterpret_cast<TappedInstance*>(tokenizer);
  instance->owner->porter.xDelete(instance->porter);
  delete instance;
}

int tapped_term(void* context, int flags, const char* term, int size, int begin, int end) {
  auto* call = static_cast<TappedCall*>(context);
  call->tap->term(call->tap->context, term, size);
  return call->callback(call->context, flags, term, size, begin, end);
}

int tokenize_tapped(Fts5Tokenizer* tokenizer, void* context, int flags, const char* text, int size,
                    TokenCallback callback) {
  auto* instance = reinterpret_cast<TappedInstance*>(tokenizer);
  const TappedPorter& owner = *instance->owner;
  if (!owner.tap->active || owner.tap->term == nullptr) {
    return owner.porter.xTokenize(instance->porter, context, flags, text, size, callback);
  }
  TappedCall call{context, callback, owner.tap};
  return owner.porter.xTokenize(instance->porter, &call, flags, text, size, tapped_term);
}

int collect_term(void* context, int /*flags*/, const char* term, int size, int /*begin*/,
                 int /*end*/) {
  try {
    static_cast<std::vector<std::string>*>(context)->emplace_back(term, static_cast<std::size_t>(size));
  } catch (...) {
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

} // namespace

int tokenize(void* context, int /*flags*/, const char* text, int size, TokenCallback callback) {
  return tokenize_into(context, text, size, callback, nullptr);
}

std::string register_tokenizer(sqlite3* db, TokenCount* count, TermTap* tap) {
  std::string error;
  fts5_api* api = sqlite::fts5_api_of(db, error);
  if (api == nullptr) return error;
  static fts5_tokenizer methods{create_tokenizer, delete_tokenizer, tokenize_entry};
  int result = api->xCreateTokenizer(api, k_tokenizer_name, count, &methods, nullptr);
  if (result != SQLITE_OK) {
    return std::string("registering the fts5 tokenizer: ") + sqlite3_errstr(result);
  }
  if (tap == nullptr) return "";
  auto* owner = new (std::nothrow) TappedPorter{{}, nullptr, tap};
  if (owner == nullptr) return "registering the fts5 tokenizer: out of memory";
  result = api->xFindTokenizer(api, "porter", &owner->porter_data, &owner->porter);
  if (result == SQLITE_OK) {
    static fts5_tokenizer tapped{create_tapped, delete_tapped, tokenize_tapped};
    result = api->xCreateTokenizer(api, "porter", owner, &tapped,
                                   [](void* data) { delete static_cast<TappedPorter*>(data); });
    if (result == SQLITE_OK) return "";  // the connection owns `owner` now
  }
  delete owner;
  return std::string("registering the fts5 tokenizer: ") + sqlite3_errstr(result);
}

std::optional<std::vector<std::vector<std::string>>> query_terms_of(
    sqlite3* db, const std::vector<std::string>& texts) {
  std::string error;
  fts5_api* api = sqlite::fts5_api_of(db, error);
  if (api == nullptr) return std::nullopt;
  void* porter_data = nullptr;
  fts5_tokenizer porter{};
  if (api->xFindTokenizer(api, "porter", &porter_data, &porter) != SQLITE_OK) return std::nullopt;
  const char* arguments[] = {k_tokenizer_name};
  Fts5Tokenizer* instance = nullptr;
  if (porter.xCreate(porter_data, arguments, 1, &instance) != SQLITE_OK) return std::nullopt;
  std::optional<std::vector<std::vector<std::string>>> terms;
  try {
    terms.emplace();
    for (const auto& text : texts) {
      auto& out = terms->emplace_back();
      if (porter.xTokenize(instance, &out, FTS5_TOKENIZE_QUERY, text.data(),
                           static_cast<int>(text.size()), collect_term) != SQLITE_OK) {
        terms.reset();
        break;
      }
    }
  } catch (...) {
    terms.reset();
  }
  porter.xDelete(instance);
  return terms;
}

} // namespace kasava::store
