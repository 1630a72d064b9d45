// Tests core/embed/input.cpp: the text embedded for a chunk.
#include <catch2/catch.hpp>

#include "core/embed/model.hpp"

using namespace kasava;

TEST_CASE("embed::embedding_input puts path, names, doc and code together") {
  types::Chunk chunk;
  chunk.kind = "method";
  chunk.symbol = "SaveUploadedFile";
  chunk.parent = "Context";
  chunk.doc = "SaveUploadedFile uploads the form file to specific dst.";
  chunk.text = "func (c *Context) SaveUploadedFile(file *multipart.FileHeader, dst string) error {";
  const std::string text = embed::embedding_input("context.go", chunk);
  // The names come first, on one line (the model weighs that line more on the code side).
  CHECK(text.find("context.go Context SaveUploadedFile\n") == 0);
  CHECK(text.find("uploads the form file") != std::string::npos);
  CHECK(text.find("multipart.FileHeader") != std::string::npos);
}

TEST_CASE("embed::embedding_input cuts very long code") {
  types::Chunk chunk;
  chunk.symbol = "big";
  chunk.text = std::string(100000, 'x');
  CHECK(embed::embedding_input("a.py", chunk).size() < 5000);
}
