// The tests' PostgreSQL server (see postgres_server.hpp): processes are spawned without a
// shell, PostgreSQL's own programs as nobody when the tests run as root.
#include "tests/support/postgres_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace kasava::test_support {

namespace {

constexpr uid_t k_nobody = 65534;

bool as_root() { return ::geteuid() == 0; }

// PostgreSQL's programs: the newest /usr/lib/postgresql/<version>/bin, else PATH.
std::string find_bin() {
  std::string best;
  int best_version = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
    const int version = std::atoi(entry.path().filename().c_str());
    if (version > best_version && std::filesystem::exists(entry.path() / "bin" / "initdb")) {
      best_version = version;
      best = (entry.path() / "bin").string();
    }
  }
  return best;
}

std::string program(const std::string& bin, const std::string& name) {
  return bin.empty() ? name : bin + "/" + name;
}

// PostgreSQL's server programs refuse root: run them as nobody then.
std::vector<std::string> unprivileged(std::vector<std::string> argv) {
  if (!as_root()) return argv;
  std::vector<std::string> command = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

struct Outcome {
  int status = -1;
  std::string output;
};

// Runs argv (looked up in PATH) with stdout and stderr into one captured string.
Outcome run(const std::vector<std::string>& argv) {
  char path[] = "/tmp/kasava-pg-out-XXXXXX";
  const int out = ::mkstemp(path);
  if (out < 0) throw std::runtime_error("mkstemp failed");
  ::unlink(path);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, out, 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Outcome outcome;
  if (spawned != 0) {
    ::close(out);
    outcome.output = "cannot run " + argv[0] + ": " + std::strerror(spawned);
    return outcome;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  ::lseek(out, 0, SEEK_SET);
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(out, buffer, sizeof buffer)) > 0) outcome.output.append(buffer, static_cast<std::size_t>(got));
  ::close(out);
  return outcome;
}

std::string describe(const std::vector<std::string>& argv, const Outcome& outcome) {
  std::string text;
  for (const std::string& arg : argv) text += arg + " ";
  return text + "exited " + std::to_string(outcome.status) + ": " + outcome.output;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("no free loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void give_to_nobody(const std::string& path) {
  if (as_root() && ::chown(path.c_str(), k_nobody, k_nobody) != 0) {
    throw std::runtime_error("cannot chown " + path);
  }
}

} // namespace

PostgresServer& PostgresServer::shared() {
  static PostgresServer server;
  return server;
}

PostgresServer::PostgresServer() {
  std::random_device random;
  std::ostringstream password;
  password << "Pg-Secret-" << std::hex << random() << random();
  m_password = password.str();
  m_bin = find_bin();
  start();
}

PostgresServer::~PostgresServer() {
  // End-of-file on its stdin: the guardian stops the server and removes the folder.
  if (m_guardian_pipe >= 0) ::close(m_guardian_pipe);
  if (m_guardian_pid > 0) {
    int status = 0;
    while (::waitpid(m_guardian_pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void PostgresServer::start() {
  char root[] = "/tmp/kasava-pg-XXXXXX";
  if (::mkdtemp(root) == nullptr) throw std::runtime_error("mkdtemp failed");
  m_root = root;
  m_dir = m_root;
  give_to_nobody(m_root);
  const std::string data = m_root + "/data";

  // The guardian first, so that even a failed start leaves nothing behind.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> guardian = {
      "sh", "-c", "read _ || true; root=$1; shift; \"$@\" >/dev/null 2>&1; rm -rf \"$root\"",
      "kasava-pg-guardian", m_root};
  for (const std::string& arg : unprivileged({program(m_bin, "pg_ctl"), "stop", "-D", data, "-m", "immediate", "-s"})) {
    guardian.push_back(arg);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group: a Ctrl-C to the tests must not kill it before it cleans up.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const std::string& arg : guardian) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "sh", &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[0]);
  if (spawned != 0) {
    ::close(pipe_fds[1]);
    throw std::runtime_error("cannot start the guardian");
  }
  m_guardian_pid = pid;
  m_guardian_pipe = pipe_fds[1];

  const std::string password_file = m_root + "/password";
  {
    std::ofstream out(password_file);
    out << m_password << "\n";
  }
  give_to_nobody(password_file);
  const std::vector<std::string> initdb = unprivileged(
      {program(m_bin, "initdb"), "-D", data, "-U", m_user, "--pwfile=" + password_file,
       "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C", "--no-instructions"});
  const Outcome made = run(initdb);
  if (made.status != 0) throw std::runtime_error(describe(initdb, made));
  std::filesystem::remove(password_file);

  for (int attempt = 1;; ++attempt) {
    m_port = free_port();
    if (launch()) return;
    if (attempt == 3) throw std::runtime_error("PostgreSQL did not start:\n" + read_text(m_root + "/log"));
  }
}

bool PostgresServer::launch() {
  const std::string settings =
      "-c listen_addresses=127.0.0.1 -p " + std::to_string(m_port) + " -k " + m_root +
      " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60";
  const std::vector<std::string> start =
      unprivileged({program(m_bin, "pg_ctl"), "start", "-D", m_root + "/data", "-l", m_root + "/log", "-w",
                    "-t", "60", "-s", "-o", settings});
  return run(start).status == 0;
}

void PostgresServer::stop() {
  const std::vector<std::string> stop =
      unprivileged({program(m_bin, "pg_ctl"), "stop", "-D", m_root + "/data", "-m", "fast", "-w", "-s"});
  const Outcome stopped = run(stop);
  if (stopped.status != 0) throw std::runtime_error(describe(stop, stopped));
}

void PostgresServer::resume() {
  if (!launch()) throw std::runtime_error("PostgreSQL did not start again:\n" + read_text(m_root + "/log"));
}

std::string PostgresServer::create_database(const std::string& prefix) {
  const std::string name = prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(++m_databases);
  psql("postgres", "CREATE DATABASE " + name);
  return name;
}

std::string PostgresServer::uri(const std::string& database) const {
  return "postgresql://" + m_user + ":" + m_password + "@127.0.0.1:" + std::to_string(m_port) + "/" + database;
}

std::string PostgresServer::uri_without_password(const std::string& database) const {
  return "postgresql://" + m_user + "@127.0.0.1:" + std::to_string(m_port) + "/" + database;
}

std::string PostgresServer::socket_conninfo(const std::string& database) const {
  return "host=" + m_dir + " port=" + std::to_string(m_port) + " user=" + m_user +
         " password=" + m_password + " dbname=" + database;
}

std::string PostgresServer::psql(const std::string& database, const std::string& sql) const {
  const std::vector<std::string> command = {program(m_bin, "psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                                            "-d", socket_conninfo(database), "-c", sql};
  const Outcome outcome = run(command);
  if (outcome.status != 0) throw std::runtime_error("psql failed: " + sql + ": " + outcome.output);
  std::string output = outcome.output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return output;
}

} // namespace kasava::test_support
