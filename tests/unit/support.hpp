// Shared helpers for the unit tests: temporary folders, files, and running git or a shell
// command whose output a test checks.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace kasava::test {

/// A temporary directory removed with everything in it when the test ends.
class TempDir {
public:
  TempDir() {
    char name[] = "/tmp/kasava-test-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    m_path = std::filesystem::canonical(name).string();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(m_path, error);
  }
  const std::string& path() const { return m_path; }
  /// The path of `relative` inside the directory.
  std::string file(const std::string& relative) const { return m_path + "/" + relative; }

private:
  std::string m_path;
};

/// Writes a file, creating its parent directories.
inline void write(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
}

/// Runs a shell command, requires it to succeed and returns its stdout without the final newline.
inline std::string run(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  std::array<char, 4096> buffer{};
  while (const std::size_t count = std::fread(buffer.data(), 1, buffer.size(), pipe))
    output.append(buffer.data(), count);
  const int status = ::pclose(pipe);
  INFO(command);
  REQUIRE(status == 0);
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

/// Runs git in `dir` with a fixed identity and no signing; returns its stdout.
inline std::string git(const std::string& dir, const std::string& arguments) {
  return run("git -C '" + dir + "' -c user.email=t@t -c user.name=t -c commit.gpgsign=false " +
             arguments);
}

} // namespace kasava::test
