// Tests of core/parse/chunker.cpp: language detection, every grammar's tag query, chunks of a
// realistic sample per language, line windows, and input that must not break the chunker.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/parse/chunker.hpp"

using kasava::parse::Chunker;
using kasava::parse::ChunkerOptions;
using kasava::types::Chunk;

namespace {

std::string describe(const std::vector<Chunk>& chunks) {
  std::string out;
  for (const Chunk& chunk : chunks) {
    out += std::to_string(chunk.start_line) + "-" + std::to_string(chunk.end_line) + " " +
           chunk.kind + " '" + chunk.symbol + "' parent='" + chunk.parent + "' sig='" +
           chunk.signature + "'\n";
  }
  return out;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

// What every chunk list must satisfy: sorted, valid 1-based ranges, text exactly the lines of
// the range (without the final line break), and every non-blank line in some chunk.
void check_invariants(std::string_view content, const std::vector<Chunk>& chunks) {
  std::vector<std::size_t> starts;
  if (!content.empty()) starts.push_back(0);
  for (std::size_t i = 0; i + 1 < content.size(); ++i) {
    if (content[i] == '\n') starts.push_back(i + 1);
  }
  const int line_count = static_cast<int>(starts.size());
  const auto line_end = [&](int line) {  // 1-based line → offset past its text
    std::size_t end = static_cast<std::size_t>(line) < starts.size()
                          ? starts[static_cast<std::size_t>(line)]
                          : content.size();
    if (end > starts[static_cast<std::size_t>(line - 1)] && content[end - 1] == '\n') --end;
    if (end > starts[static_cast<std::size_t>(line - 1)] && content[end - 1] == '\r') --end;
    return end;
  };
  INFO(describe(chunks));
  std::vector<bool> covered(static_cast<std::size_t>(line_count) + 1, false);
  int previous_start = 1;
  for (const Chunk& chunk : chunks) {
    INFO("chunk " << chunk.start_line << "-" << chunk.end_line << " " << chunk.kind << " "
                  << chunk.symbol);
    REQUIRE(chunk.start_line >= 1);
    REQUIRE(chunk.end_line >= chunk.start_line);
    REQUIRE(chunk.end_line <= line_count);
    REQUIRE(chunk.start_line >= previous_start);
    REQUIRE_FALSE(chunk.kind.empty());
    if (chunk.kind == "block") REQUIRE(chunk.signature.empty());
    previous_start = chunk.start_line;
    const std::size_t begin = starts[static_cast<std::size_t>(chunk.start_line - 1)];
    REQUIRE(chunk.text == content.substr(begin, line_end(chunk.end_line) - begin));
    for (int line = chunk.start_line; line <= chunk.end_line; ++line)
      covered[static_cast<std::size_t>(line)] = true;
  }
  for (int line = 1; line <= line_count; ++line) {
    const std::size_t begin = starts[static_cast<std::size_t>(line - 1)];
    if (is_blank(content.substr(begin, line_end(line) - begin))) continue;
    INFO("line " << line << " is not in any chunk");
    REQUIRE(covered[static_cast<std::size_t>(line)]);
  }
}

std::vector<Chunk> chunk_as(std::string_view language, std::string_view content,
                            ChunkerOptions options = {}) {
  Chunker chunker(options);
  std::vector<Chunk> chunks = chunker.chunk("sample", language, content);
  check_invariants(content, chunks);
  return chunks;
}

// The chunks of a definition, in order (one unless it is split or a class with own lines).
std::vector<Chunk> find_all(const std::vector<Chunk>& chunks, std::string_view kind,
                            std::string_view symbol) {
  std::vector<Chunk> found;
  for (const Chunk& chunk : chunks) {
    if (chunk.kind == kind && chunk.symbol == symbol) found.push_back(chunk);
  }
  return found;
}

Chunk find(const std::vector<Chunk>& chunks, std::string_view kind, std::string_view symbol) {
  const std::vector<Chunk> found = find_all(chunks, kind, symbol);
  INFO(describe(chunks));
  INFO("looking for " << kind << " '" << symbol << "'");
  REQUIRE_FALSE(found.empty());
  return found.front();
}

// One expected definition chunk; an empty doc or signature is checked to be empty too.
struct Expected {
  std::string kind;
  std::string symbol;
  std::string parent;
  int start_line;
  int end_line;
  std::string doc;
  std::string signature;
};

void check_expected(const std::vector<Chunk>& chunks, const std::vector<Expected>& expected) {
  for (const Expected& want : expected) {
    const Chunk chunk = find(chunks, want.kind, want.symbol);
    INFO(want.kind << " '" << want.symbol << "'");
    CHECK(chunk.parent == want.parent);
    CHECK(chunk.start_line == want.start_line);
    CHECK(chunk.end_line == want.end_line);
    CHECK(chunk.doc == want.doc);
    CHECK(chunk.signature == want.signature);
  }
}

bool has_symbol(const std::vector<Chunk>& chunks, std::string_view symbol) {
  return std::any_of(chunks.begin(), chunks.end(),
                     [&](const Chunk& chunk) { return chunk.symbol == symbol; });
}

constexpr std::string_view k_python_sample = R"src(import os
import sys

CONSTANT = 3


class Greeter(Base):
    """Greets people.

    Keeps a count.
    """

    count = 0

    # Makes a greeting.
    @staticmethod
    def greet(name: str) -> str:
        """Return a greeting for name."""
        return f"hi {name}"

    async def wait(self):
        pass

    limit = 10


def main():
    def helper():
        return 1
    print(Greeter.greet("x"))


if __name__ == "__main__":
    main()
)src";

constexpr std::string_view k_javascript_sample = R"src(import { x } from "./x.js";

/**
 * Adds numbers.
 * @param {number} a
 */
export function add(a, b) {
  return a + b;
}

export const mul = (a, b) => {
  return a * b;
};

class Counter extends Base {
  // Creates a counter.
  constructor() {
    super();
    this.n = 0;
  }

  increment() {
    this.n++;
  }
}

module.exports.sub = function (a, b) {
  return a - b;
};
)src";

constexpr std::string_view k_typescript_sample = R"src(import { Injectable } from "@angular/core";

/** A user record. */
export interface User {
  id: number;
  name(): string;
}

export type Id = string | number;

export enum Color {
  Red,
  Green,
}

@Injectable()
export class UserService {
  private users: User[] = [];

  /** Finds a user by id. */
  find(id: Id): User | undefined {
    return this.users.find((u) => u.id === id);
  }

  handle = (e: Event): void => {
    console.log(e);
  };
}

export const fetchUser = async (id: number): Promise<User> => {
  return await get(id);
};

namespace Util {
  export function pad(s: string): string {
    return s;
  }
}
)src";

constexpr std::string_view k_tsx_sample = R"src(import React from "react";

// Shows a button.
export function Button({ label }: { label: string }) {
  return <button>{label}</button>;
}

export const App = () => {
  return (
    <div>
      <Button label="x" />
    </div>
  );
};
)src";

constexpr std::string_view k_go_sample = R"src(package server

import "fmt"

// Server serves requests.
// It is safe for concurrent use.
type Server struct {
	addr string
}

// Handler handles things.
type Handler interface {
	Handle() error
}

type ID int

// Start starts the server.
func (s *Server) Start(port int) error {
	fmt.Println(port)
	return nil
}

func (s Set[T]) Add(v T) {}

// New makes a server.
func New(addr string) *Server {
	return &Server{addr: addr}
}
)src";

constexpr std::string_view k_rust_sample = R"src(use std::fmt;

/// A point in space.
#[derive(Debug, Clone)]
pub struct Point {
    x: f64,
    y: f64,
}

impl Point {
    /// Makes a point.
    pub fn new(x: f64, y: f64) -> Self {
        Point { x, y }
    }

    fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub trait Shape {
    fn area(&self) -> f64;
}

pub enum Kind { A, B }

macro_rules! square {
    ($x:expr) => { $x * $x };
}

// Entry point.
fn main() {
    println!("{}", Point::new(1.0, 2.0));
}
)src";

constexpr std::string_view k_java_sample = R"src(package com.example;

import java.util.List;

/**
 * Manages accounts.
 */
public class AccountService {
    private final List<String> names;

    /** Creates the service. */
    public AccountService(List<String> names) {
        this.names = names;
    }

    /**
     * Deposits money.
     * @param amount how much
     */
    @Override
    public void deposit(int amount) {
        System.out.println(amount);
    }

    enum State { OPEN, CLOSED }
}

interface Repository {
    void save(String item);
}
)src";

constexpr std::string_view k_c_sample = R"src(#include <stdio.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A node in a list. */
struct node {
    int value;
    struct node *next;
};

typedef struct {
    int x;
} point_t;

enum color { RED, GREEN };

// Sums the list.
static int sum(const struct node *head) {
    int total = 0;
    for (; head; head = head->next) total += head->value;
    return total;
}

char *copy_name(const char *name) {
    return NULL;
}

int main(void) {
    return 0;
}
)src";

constexpr std::string_view k_cpp_sample = R"src(#include <string>

namespace net {

/// A TCP connection.
class Connection : public Base {
public:
  Connection();
  /// Sends bytes.
  int send(const std::string& data) {
    return 0;
  }
private:
  int m_fd;
};

struct Point { int x; int y; };

enum class Color { red, green };

template <typename T>
T max_of(T a, T b) {
  return a > b ? a : b;
}

// Receives bytes.
int* Connection::receive(int n) {
  return nullptr;
}

Connection::~Connection() {}

} // namespace net
)src";

constexpr std::string_view k_csharp_sample = R"src(using System;

namespace Shop.Orders
{
    /// <summary>An order.</summary>
    public class Order
    {
        public int Id { get; set; }

        /// <summary>Creates an order.</summary>
        public Order(int id)
        {
            Id = id;
        }

        [Obsolete]
        public decimal Total()
        {
            return 0m;
        }
    }

    public struct Money { public decimal Amount; }

    public interface IRepository
    {
        void Save(Order order);
    }

    public enum Status { Open, Closed }
}
)src";

constexpr std::string_view k_ruby_sample = R"src(require "json"

# Handles payments.
module Billing
  # A customer invoice.
  class Invoice < Base
    attr_reader :total

    # Creates an invoice.
    def initialize(total)
      @total = total
    end

    def self.build(data)
      new(data["total"])
    end

    alias_method :amount, :total
  end
end

def helper(x)
  x * 2
end
)src";

constexpr std::string_view k_php_sample = R"src(<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

/**
 * A user of the app.
 */
class User extends Model
{
    protected $fillable = ['name'];

    /**
     * Gets the full name.
     */
    public function fullName(): string
    {
        return $this->first . ' ' . $this->last;
    }
}

interface Shape
{
    public function area(): float;
}

trait Greets
{
    public function greet() { return "hi"; }
}

// Formats money.
function format_money($amount) {
    return number_format($amount, 2);
}
)src";

constexpr std::string_view k_kotlin_sample = R"src(package com.example

import kotlin.math.sqrt

/**
 * A repository of users.
 */
interface UserRepository {
    fun find(id: Int): User?
}

// A user.
data class User(val id: Int, val name: String) {
    fun greet(): String {
        return "hi $name"
    }

    companion object {
        fun empty() = User(0, "")
    }
}

enum class Color { RED, GREEN }

object Registry {
    val users = mutableListOf<User>()

    fun register(user: User) {
        users.add(user)
    }
}

fun String.shout(): String = uppercase()

fun main() {
    println(sqrt(2.0))
}
)src";

constexpr std::string_view k_swift_sample = R"src(import Foundation

/// A shape.
protocol Shape {
    func area() -> Double
}

// A circle.
class Circle: Shape {
    let radius: Double

    init(radius: Double) {
        self.radius = radius
    }

    /// The area.
    func area() -> Double {
        return Double.pi * radius * radius
    }
}

struct Point {
    var x: Double
    var y: Double
}

enum Direction {
    case north
    case south
}

extension Circle {
    func describe() -> String {
        return "circle"
    }
}

func main() {
    print(Circle(radius: 1).area())
}
)src";

constexpr std::string_view k_scala_sample = R"src(package example

import scala.collection.mutable

/** A shape. */
trait Shape {
  def area: Double
}

// A circle.
case class Circle(radius: Double) extends Shape {
  def area: Double = math.Pi * radius * radius

  def scale(k: Double): Circle = {
    Circle(radius * k)
  }
}

object Main {
  def main(args: Array[String]): Unit = {
    println(Circle(1).area)
  }
}

enum Color {
  case Red, Green
}
)src";

constexpr std::string_view k_lua_sample = R"src(local M = {}

--- Adds two numbers.
-- @param a number
function M.add(a, b)
  return a + b
end

function M.sub.deep(a) return a end

-- Greets.
function Greeter:greet(name)
  print("hi " .. name)
end

local function helper(x)
  return x * 2
end

function globalfn() end

M.mul = function(a, b) return a * b end
local sq = function(x) return x * x end

return M
)src";

constexpr std::string_view k_bash_sample = R"src(#!/bin/bash
set -euo pipefail

# Prints usage.
usage() {
  echo "usage: $0 file"
}

function build {
  make -j2
}

if [ $# -eq 0 ]; then
  usage
fi
build
)src";

}  // namespace

TEST_CASE("parse::detect_language") {
  using kasava::parse::detect_language;
  CHECK(detect_language("src/app.py") == "python");
  CHECK(detect_language("SRC/APP.PY") == "python");
  CHECK(detect_language("web/types.d.ts") == "typescript");
  CHECK(detect_language("ui/App.tsx") == "tsx");
  CHECK(detect_language("include/list.h") == "c");
  CHECK(detect_language("lib/x.hpp") == "cpp");
  CHECK(detect_language("Makefile") == "make");
  CHECK(detect_language("sub/dir/CMakeLists.txt") == "cmake");
  CHECK(detect_language("notes.txt") == "markdown");
  CHECK(detect_language("README.md") == "markdown");
  CHECK(detect_language("home/.bashrc") == "bash");
  CHECK(detect_language("win\\path\\main.go") == "go");
  CHECK(detect_language("Gemfile") == "ruby");
  CHECK(detect_language("data.unknownext") == "");
  CHECK(detect_language("LICENSE") == "");
  CHECK(detect_language("") == "");
  CHECK(detect_language("dir.py/") == "");
}

TEST_CASE("parse::known_languages and has_grammar") {
  using kasava::parse::has_grammar;
  const std::vector<std::string> languages = kasava::parse::known_languages();
  CHECK(std::is_sorted(languages.begin(), languages.end()));
  for (const char* language :
       {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "csharp",
        "ruby", "php", "kotlin", "swift", "scala", "lua", "bash", "markdown", "json"}) {
    INFO(language);
    CHECK(std::find(languages.begin(), languages.end(), language) != languages.end());
  }
  CHECK(has_grammar("python"));
  CHECK(has_grammar("lua"));
  CHECK_FALSE(has_grammar("markdown"));
  CHECK_FALSE(has_grammar("json"));
  CHECK_FALSE(has_grammar(""));
  CHECK_FALSE(has_grammar("cobol"));
}

TEST_CASE("parse::tag_query_error: every grammar's tag query compiles") {
  int grammars = 0;
  for (const std::string& language : kasava::parse::known_languages()) {
    if (!kasava::parse::has_grammar(language)) continue;
    INFO(language);
    CHECK(kasava::parse::tag_query_error(language).empty());
    ++grammars;
  }
  CHECK(grammars >= 17);
  CHECK(kasava::parse::tag_query_error("markdown").empty());
}

TEST_CASE("parse::Chunker: python") {
  const auto chunks = chunk_as("python", k_python_sample);
  check_expected(chunks, {
                             {"class", "Greeter", "", 7, 13, "Greets people.\n\nKeeps a count.",
                              "class Greeter(Base):"},
                             {"method", "greet", "Greeter", 15, 19,
                              "Makes a greeting.\nReturn a greeting for name.",
                              "def greet(name: str) -> str:"},
                             {"method", "wait", "Greeter", 21, 22, "", "async def wait(self):"},
                             {"function", "main", "", 27, 30, "", "def main():"},
                             {"function", "helper", "main", 28, 29, "", "def helper():"},
                         });
  // The class's own lines after its methods are a chunk of the class, without the doc.
  const auto greeter = find_all(chunks, "class", "Greeter");
  REQUIRE(greeter.size() == 2);
  CHECK(greeter[1].start_line == 24);
  CHECK(greeter[1].end_line == 24);
  CHECK(greeter[1].doc.empty());
  CHECK(greeter[1].signature == "class Greeter(Base):");
  // Module-level constants are not definitions: they stay in blocks.
  CHECK_FALSE(has_symbol(chunks, "CONSTANT"));
  CHECK(find(chunks, "block", "").start_line == 1);
}

TEST_CASE("parse::Chunker: javascript") {
  const auto chunks = chunk_as("javascript", k_javascript_sample);
  check_expected(
      chunks,
      {
          {"function", "add", "", 3, 9, "Adds numbers.\n@param {number} a",
           "export function add(a, b)"},
          {"function", "mul", "", 11, 13, "", "export const mul = (a, b) =>"},
          {"class", "Counter", "", 15, 15, "", "class Counter extends Base"},
          {"method", "constructor", "Counter", 16, 20, "Creates a counter.", "constructor()"},
          {"method", "increment", "Counter", 22, 25, "", "increment()"},
          {"function", "sub", "", 27, 29, "", "module.exports.sub = function (a, b)"},
      });
}

TEST_CASE("parse::Chunker: typescript") {
  const auto chunks = chunk_as("typescript", k_typescript_sample);
  check_expected(
      chunks, {
                  {"interface", "User", "", 3, 7, "A user record.", "export interface User"},
                  {"type", "Id", "", 9, 9, "", "export type Id = string | number;"},
                  {"enum", "Color", "", 11, 14, "", "export enum Color"},
                  {"class", "UserService", "", 16, 18, "", "export class UserService"},
                  {"method", "find", "UserService", 20, 23, "Finds a user by id.",
                   "find(id: Id): User | undefined"},
                  {"method", "handle", "UserService", 25, 28, "", "handle = (e: Event): void =>"},
                  {"function", "fetchUser", "", 30, 32, "",
                   "export const fetchUser = async (id: number): Promise<User> =>"},
                  {"module", "Util", "", 34, 34, "", "namespace Util"},
                  {"function", "pad", "Util", 35, 38, "", "export function pad(s: string): string"},
              });
  // Interface members are part of the interface, not chunks of their own.
  CHECK_FALSE(has_symbol(chunks, "name"));
}

TEST_CASE("parse::Chunker: tsx") {
  const auto chunks = chunk_as("tsx", k_tsx_sample);
  check_expected(chunks, {
                             {"function", "Button", "", 3, 6, "Shows a button.",
                              "export function Button({ label }: { label: string })"},
                             {"function", "App", "", 8, 14, "", "export const App = () =>"},
                         });
}

TEST_CASE("parse::Chunker: go") {
  const auto chunks = chunk_as("go", k_go_sample);
  check_expected(
      chunks,
      {
          {"struct", "Server", "", 5, 9, "Server serves requests.\nIt is safe for concurrent use.",
           "type Server struct"},
          {"interface", "Handler", "", 11, 14, "Handler handles things.", "type Handler interface"},
          {"type", "ID", "", 16, 16, "", "type ID int"},
          {"method", "Start", "Server", 18, 22, "Start starts the server.",
           "func (s *Server) Start(port int) error"},
          {"method", "Add", "Set", 24, 24, "", "func (s Set[T]) Add(v T)"},
          {"function", "New", "", 26, 29, "New makes a server.", "func New(addr string) *Server"},
      });
}

TEST_CASE("parse::Chunker: rust") {
  const auto chunks = chunk_as("rust", k_rust_sample);
  check_expected(chunks, {
                             {"struct", "Point", "", 3, 8, "A point in space.", "pub struct Point"},
                             {"method", "new", "Point", 11, 14, "Makes a point.",
                              "pub fn new(x: f64, y: f64) -> Self"},
                             {"method", "norm", "Point", 16, 19, "", "fn norm(&self) -> f64"},
                             {"method", "fmt", "Point", 22, 25, "",
                              "fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result"},
                             {"interface", "Shape", "", 27, 29, "", "pub trait Shape"},
                             {"enum", "Kind", "", 31, 31, "", "pub enum Kind"},
                             {"macro", "square", "", 33, 35, "", "macro_rules! square"},
                             {"function", "main", "", 37, 40, "Entry point.", "fn main()"},
                         });
  const auto impls = find_all(chunks, "impl", "Point");
  REQUIRE(impls.size() == 2);
  CHECK(impls[0].signature == "impl Point");
  CHECK(impls[1].signature == "impl fmt::Display for Point");
}

TEST_CASE("parse::Chunker: java") {
  const auto chunks = chunk_as("java", k_java_sample);
  check_expected(
      chunks,
      {
          {"class", "AccountService", "", 5, 9, "Manages accounts.", "public class AccountService"},
          {"method", "AccountService", "AccountService", 11, 14, "Creates the service.",
           "public AccountService(List<String> names)"},
          {"method", "deposit", "AccountService", 16, 23, "Deposits money.\n@param amount how much",
           "@Override public void deposit(int amount)"},
          {"enum", "State", "AccountService", 25, 26, "", "enum State"},
          {"interface", "Repository", "", 28, 30, "", "interface Repository"},
      });
  CHECK_FALSE(has_symbol(chunks, "save"));  // a declaration: part of its interface
}

TEST_CASE("parse::Chunker: c") {
  const auto chunks = chunk_as("c", k_c_sample);
  check_expected(chunks,
                 {
                     {"macro", "MAX", "", 3, 3, "", "#define MAX(a, b) ((a) > (b) ? (a) : (b))"},
                     {"struct", "node", "", 5, 9, "A node in a list.", "struct node"},
                     {"struct", "point_t", "", 11, 13, "", "typedef struct"},
                     {"enum", "color", "", 15, 15, "", "enum color"},
                     {"function", "sum", "", 17, 22, "Sums the list.",
                      "static int sum(const struct node *head)"},
                     {"function", "copy_name", "", 24, 26, "", "char *copy_name(const char *name)"},
                     {"function", "main", "", 28, 30, "", "int main(void)"},
                 });
}

TEST_CASE("parse::Chunker: cpp") {
  const auto chunks = chunk_as("cpp", k_cpp_sample);
  check_expected(
      chunks,
      {
          {"module", "net", "", 3, 3, "", "namespace net"},
          {"class", "Connection", "net", 5, 8, "A TCP connection.",
           "class Connection : public Base"},
          {"method", "send", "Connection", 9, 12, "Sends bytes.",
           "int send(const std::string& data)"},
          {"struct", "Point", "net", 17, 17, "", "struct Point"},
          {"enum", "Color", "net", 19, 19, "", "enum class Color"},
          {"function", "max_of", "net", 21, 24, "", "template <typename T> T max_of(T a, T b)"},
          {"method", "receive", "Connection", 26, 29, "Receives bytes.",
           "int* Connection::receive(int n)"},
          // The namespace's closing line has no chunk of its own: it extends the chunk before it.
          {"method", "~Connection", "Connection", 31, 33, "", "Connection::~Connection()"},
      });
  const auto connection = find_all(chunks, "class", "Connection");
  REQUIRE(connection.size() == 2);  // the head, then the private part after send()
  CHECK(connection[1].start_line == 13);
  CHECK(connection[1].end_line == 15);
}

TEST_CASE("parse::Chunker: c and cpp functions are named through their declarators") {
  // Two pointers deep, and a parse a macro confused: `__BEGIN_DECLS` makes tree-sitter read
  // the struct below as a "function_definition" whose declarator is a bare identifier.
  const auto c = chunk_as("c",
                          "char **split_words(const char *text)\n{\n  return 0;\n}\n\n"
                          "__BEGIN_DECLS\n\nstruct aliasent\n  {\n    char *alias_name;\n  };\n");
  CHECK(find_all(c, "function", "split_words").size() == 1);
  CHECK(find_all(c, "function", "aliasent").empty());
  const auto cpp = chunk_as("cpp",
                            "namespace store {\nint **table_for(int n) { return nullptr; }\n}\n"
                            "const char **Registry::lookup(int n) { return nullptr; }\n");
  const auto table_for = find_all(cpp, "function", "table_for");
  REQUIRE(table_for.size() == 1);
  CHECK(table_for[0].parent == "store");
  const auto lookup = find_all(cpp, "method", "lookup");
  REQUIRE(lookup.size() == 1);
  CHECK(lookup[0].parent == "Registry");
}

TEST_CASE("parse::Chunker: csharp") {
  const auto chunks = chunk_as("csharp", k_csharp_sample);
  check_expected(
      chunks,
      {
          {"module", "Shop.Orders", "", 3, 4, "", "namespace Shop.Orders"},
          {"class", "Order", "Shop.Orders", 5, 8, "<summary>An order.</summary>",
           "public class Order"},
          {"method", "Order", "Order", 10, 14, "<summary>Creates an order.</summary>",
           "public Order(int id)"},
          {"method", "Total", "Order", 16, 21, "", "[Obsolete] public decimal Total()"},
          {"struct", "Money", "Shop.Orders", 23, 23, "", "public struct Money"},
          {"interface", "IRepository", "Shop.Orders", 25, 28, "", "public interface IRepository"},
          {"enum", "Status", "Shop.Orders", 30, 31, "", "public enum Status"},
      });
}

TEST_CASE("parse::Chunker: ruby") {
  const auto chunks = chunk_as("ruby", k_ruby_sample);
  check_expected(chunks, {
                             {"module", "Billing", "", 3, 4, "Handles payments.", "module Billing"},
                             {"class", "Invoice", "Billing", 5, 7, "A customer invoice.",
                              "class Invoice < Base"},
                             {"method", "initialize", "Invoice", 9, 12, "Creates an invoice.",
                              "def initialize(total)"},
                             {"method", "build", "Invoice", 14, 16, "", "def self.build(data)"},
                             {"function", "helper", "", 22, 24, "", "def helper(x)"},
                         });
}

TEST_CASE("parse::Chunker: php") {
  const auto chunks = chunk_as("php", k_php_sample);
  check_expected(chunks,
                 {
                     {"class", "User", "", 7, 12, "A user of the app.", "class User extends Model"},
                     {"method", "fullName", "User", 14, 21, "Gets the full name.",
                      "public function fullName(): string"},
                     {"interface", "Shape", "", 23, 26, "", "interface Shape"},
                     {"interface", "Greets", "", 28, 29, "", "trait Greets"},
                     {"method", "greet", "Greets", 30, 31, "", "public function greet()"},
                     {"function", "format_money", "", 33, 36, "Formats money.",
                      "function format_money($amount)"},
                 });
  // `namespace App\Models;` has no body: it is a statement in the first block.
  CHECK(find(chunks, "block", "").start_line == 1);
}

TEST_CASE("parse::Chunker: kotlin") {
  const auto chunks = chunk_as("kotlin", k_kotlin_sample);
  check_expected(chunks,
                 {
                     {"interface", "UserRepository", "", 5, 10, "A repository of users.",
                      "interface UserRepository"},
                     {"class", "User", "", 12, 13, "A user.",
                      "data class User(val id: Int, val name: String)"},
                     {"method", "greet", "User", 14, 16, "", "fun greet(): String"},
                     {"method", "empty", "User", 19, 21, "", "fun empty()"},
                     {"enum", "Color", "", 23, 23, "", "enum class Color"},
                     {"class", "Registry", "", 25, 26, "", "object Registry"},
                     {"method", "register", "Registry", 28, 31, "", "fun register(user: User)"},
                     {"function", "shout", "", 33, 33, "", "fun String.shout(): String"},
                     {"function", "main", "", 35, 37, "", "fun main()"},
                 });
}

TEST_CASE("parse::Chunker: swift") {
  const auto chunks = chunk_as("swift", k_swift_sample);
  check_expected(chunks,
                 {
                     {"interface", "Shape", "", 3, 6, "A shape.", "protocol Shape"},
                     {"class", "Circle", "", 8, 10, "A circle.", "class Circle: Shape"},
                     {"method", "init", "Circle", 12, 14, "", "init(radius: Double)"},
                     {"method", "area", "Circle", 16, 20, "The area.", "func area() -> Double"},
                     {"struct", "Point", "", 22, 25, "", "struct Point"},
                     {"enum", "Direction", "", 27, 30, "", "enum Direction"},
                     {"impl", "Circle", "", 32, 32, "", "extension Circle"},
                     {"method", "describe", "Circle", 33, 36, "", "func describe() -> String"},
                     {"function", "main", "", 38, 40, "", "func main()"},
                 });
}

TEST_CASE("parse::Chunker: scala") {
  const auto chunks = chunk_as("scala", k_scala_sample);
  check_expected(
      chunks, {
                  {"interface", "Shape", "", 5, 8, "A shape.", "trait Shape"},
                  {"class", "Circle", "", 10, 11, "A circle.",
                   "case class Circle(radius: Double) extends Shape"},
                  {"method", "area", "Circle", 12, 12, "", "def area: Double ="},
                  {"method", "scale", "Circle", 14, 17, "", "def scale(k: Double): Circle ="},
                  {"class", "Main", "", 19, 19, "", "object Main"},
                  {"method", "main", "Main", 20, 23, "", "def main(args: Array[String]): Unit ="},
                  {"enum", "Color", "", 25, 27, "", "enum Color"},
              });
}

TEST_CASE("parse::Chunker: lua") {
  const auto chunks = chunk_as("lua", k_lua_sample);
  check_expected(
      chunks, {
                  {"function", "add", "M", 3, 7, "Adds two numbers.\n@param a number",
                   "function M.add(a, b)"},
                  {"function", "deep", "M.sub", 9, 9, "", "function M.sub.deep(a)"},
                  {"method", "greet", "Greeter", 11, 14, "Greets.", "function Greeter:greet(name)"},
                  {"function", "helper", "", 16, 18, "", "local function helper(x)"},
                  {"function", "globalfn", "", 20, 20, "", "function globalfn() end"},
                  {"function", "mul", "M", 22, 22, "", "M.mul = function(a, b)"},
                  {"function", "sq", "", 23, 23, "", "local sq = function(x)"},
              });
}

TEST_CASE("parse::Chunker: bash") {
  const auto chunks = chunk_as("bash", k_bash_sample);
  check_expected(chunks, {
                             {"function", "usage", "", 4, 7, "Prints usage.", "usage()"},
                             {"function", "build", "", 9, 11, "", "function build"},
                         });
  CHECK(find(chunks, "block", "").start_line == 1);
  CHECK(chunks.back().kind == "block");
  CHECK(chunks.back().start_line == 13);
  CHECK(chunks.back().end_line == 16);
}

// tree-sitter 0.25 creates a new external scanner for each parse; scanners that do not reset
// their state (tree-sitter-lua 2.1.3, tree-sitter-swift 0.7.1) broke every parse but the first.
TEST_CASE("parse::Chunker: reusing one chunker gives the same chunks every time") {
  const std::vector<std::pair<std::string_view, std::string_view>> samples = {
      {"python", k_python_sample},
      {"javascript", k_javascript_sample},
      {"typescript", k_typescript_sample},
      {"tsx", k_tsx_sample},
      {"go", k_go_sample},
      {"rust", k_rust_sample},
      {"java", k_java_sample},
      {"c", k_c_sample},
      {"cpp", k_cpp_sample},
      {"csharp", k_csharp_sample},
      {"ruby", k_ruby_sample},
      {"php", k_php_sample},
      {"kotlin", k_kotlin_sample},
      {"swift", k_swift_sample},
      {"scala", k_scala_sample},
      {"lua", k_lua_sample},
      {"bash", k_bash_sample},
  };
  Chunker chunker;
  std::vector<std::string> first;
  for (const auto& [language, content] : samples) {
    first.push_back(describe(chunker.chunk("a", language, content)));
  }
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      INFO(samples[i].first << " round " << round);
      CHECK(describe(chunker.chunk("a", samples[i].first, samples[i].second)) == first[i]);
      // The same language twice in a row, too.
      CHECK(describe(chunker.chunk("a", samples[i].first, samples[i].second)) == first[i]);
    }
  }
  // And a fresh chunker agrees.
  for (std::size_t i = 0; i < samples.size(); ++i) {
    INFO(samples[i].first);
    CHECK(describe(chunk_as(samples[i].first, samples[i].second)) == first[i]);
  }
}

TEST_CASE("parse::Chunker: the tag query run at its patterns' start nodes finds what it finds "
          "over the whole tree") {
  const std::vector<std::pair<std::string_view, std::string_view>> samples = {
      {"python", k_python_sample}, {"javascript", k_javascript_sample},
      {"typescript", k_typescript_sample}, {"tsx", k_tsx_sample}, {"go", k_go_sample},
      {"rust", k_rust_sample}, {"java", k_java_sample}, {"c", k_c_sample}, {"cpp", k_cpp_sample},
      {"csharp", k_csharp_sample}, {"ruby", k_ruby_sample}, {"php", k_php_sample},
      {"kotlin", k_kotlin_sample}, {"swift", k_swift_sample}, {"scala", k_scala_sample},
      {"lua", k_lua_sample}, {"bash", k_bash_sample},
  };
  ChunkerOptions whole_tree;
  whole_tree.whole_tree_query = true;
  Chunker at_starts;
  Chunker everywhere(whole_tree);
  for (const auto& [language, content] : samples) {
    INFO(language);
    // Every shipped query takes the fast way: its patterns' first nodes are known.
    CHECK(kasava::parse::tag_query_runs_at_starts(language));
    const auto fast = at_starts.chunk("a", language, content);
    CHECK(fast.size() > 2);
    CHECK(describe(fast) == describe(everywhere.chunk("a", language, content)));
  }
  CHECK_FALSE(kasava::parse::tag_query_runs_at_starts("markdown"));
}

TEST_CASE("parse::Chunker: plain text is cut into windows") {
  std::string text;
  for (int i = 1; i <= 100; ++i) text += "line " + std::to_string(i) + "\n";
  const auto chunks = chunk_as("", text, ChunkerOptions{40, 150, 2000});
  // 100 lines in balanced windows of at most 40: 34 + 33 + 33.
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].start_line == 1);
  CHECK(chunks[0].end_line == 34);
  CHECK(chunks[1].start_line == 35);
  CHECK(chunks[2].end_line == 100);
  for (const Chunk& chunk : chunks) {
    CHECK(chunk.kind == "block");
    CHECK(chunk.symbol.empty());
    CHECK(chunk.end_line - chunk.start_line + 1 <= 40);
  }
  // A language without a grammar is windows too.
  CHECK(describe(chunk_as("json", text, ChunkerOptions{40, 150, 2000})) == describe(chunks));
  // An unknown language name as well.
  CHECK(describe(chunk_as("cobol", text, ChunkerOptions{40, 150, 2000})) == describe(chunks));
}

TEST_CASE("parse::Chunker: blank lines are trimmed from windows and blank windows skipped") {
  const std::string text = "\n\n\nfirst\n\n" + std::string(60, '\n') + "second\nthird\n\n\n";
  const auto chunks = chunk_as("", text, ChunkerOptions{10, 150, 2000});
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0].start_line == 4);
  CHECK(chunks[0].end_line == 4);
  CHECK(chunks[0].text == "first");
  CHECK(chunks[1].text == "second\nthird");
}

TEST_CASE("parse::Chunker: markdown is cut at headings") {
  const std::string text =
      "Intro text.\n"
      "\n"
      "# Install\n"
      "Run the script.\n"
      "```sh\n"
      "# not a heading\n"
      "```\n"
      "\n"
      "## Usage ##\n"
      "Ask questions.\n";
  const auto chunks = chunk_as("markdown", text);
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].symbol.empty());
  CHECK(chunks[0].text == "Intro text.");
  CHECK(chunks[1].symbol == "Install");
  CHECK(chunks[1].start_line == 3);
  CHECK(chunks[1].end_line == 7);
  CHECK(chunks[2].symbol == "Usage");
  CHECK(chunks[2].start_line == 9);
  CHECK(chunks[2].end_line == 10);
  for (const Chunk& chunk : chunks) CHECK(chunk.kind == "block");
}

TEST_CASE("parse::Chunker: long definitions are split into parts") {
  std::string code = "def long_function(x):\n    \"\"\"Does a lot.\"\"\"\n";
  for (int i = 0; i < 318; ++i) code += "    x += " + std::to_string(i) + "\n";
  code += "    return x\n";  // 321 lines in all
  const auto chunks = chunk_as("python", code, ChunkerOptions{40, 150, 2000});
  const auto parts = find_all(chunks, "function", "long_function");
  // Balanced: 321 lines in 3 parts of at most 150.
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].start_line == 1);
  CHECK(parts[0].end_line == 107);
  CHECK(parts[1].start_line == 108);
  CHECK(parts[2].end_line == 321);
  CHECK(parts[0].doc == "Does a lot.");
  for (const Chunk& part : parts) {
    CHECK(part.signature == "def long_function(x):");
    CHECK(part.end_line - part.start_line + 1 <= 150);
  }
  CHECK(parts[1].doc.empty());
}

TEST_CASE("parse::Chunker: top-level code between definitions becomes blocks") {
  std::string code = "import os\n\n";
  for (int i = 0; i < 90; ++i) code += "print(" + std::to_string(i) + ")\n";
  code += "\ndef f():\n    return 1\n\nx = f()\n";
  const auto chunks = chunk_as("python", code, ChunkerOptions{40, 150, 2000});
  REQUIRE(chunks.size() == 5);  // 92 lines of statements in 3 windows, f, then x = f()
  CHECK(chunks[0].kind == "block");
  CHECK(chunks[0].start_line == 1);
  CHECK(chunks[2].end_line == 92);
  CHECK(chunks[3].symbol == "f");
  CHECK(chunks[4].kind == "block");
  CHECK(chunks[4].text == "x = f()");
}

TEST_CASE("parse::Chunker: a class without methods is one chunk") {
  const std::string code =
      "# A plain record.\n"
      "class Record:\n"
      "    a = 1\n"
      "    b = 2\n";
  const auto chunks = chunk_as("python", code);
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].kind == "class");
  CHECK(chunks[0].start_line == 1);
  CHECK(chunks[0].end_line == 4);
  CHECK(chunks[0].doc == "A plain record.");
}

TEST_CASE("parse::Chunker: a comment separated by a blank line is not a doc comment") {
  const std::string code =
      "// Copyright notice.\n"
      "\n"
      "int answer(void) {\n"
      "  return 42; // the answer\n"
      "}\n"
      "int x = 1; // trailing comment\n"
      "int next(void) { return 1; }\n";
  const auto chunks = chunk_as("c", code);
  const Chunk answer = find(chunks, "function", "answer");
  CHECK(answer.doc.empty());
  CHECK(answer.start_line == 3);
  const Chunk next = find(chunks, "function", "next");
  CHECK(next.doc.empty());
  CHECK(next.start_line == 7);
}

TEST_CASE("parse::Chunker: edge cases of input") {
  Chunker chunker;
  SECTION("empty content") {
    CHECK(chunker.chunk("a.py", "python", "").empty());
    CHECK(chunker.chunk("a.txt", "", "").empty());
  }
  SECTION("only blank lines") {
    CHECK(chunker.chunk("a.py", "python", "\n\n  \n\t\n").empty());
    CHECK(chunker.chunk("a.txt", "", "\n\n  \n").empty());
  }
  SECTION("no trailing newline") {
    const std::string code = "def f():\n    return 1";
    const auto chunks = chunk_as("python", code);
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0].end_line == 2);
    CHECK(chunks[0].text == code);
  }
  SECTION("CRLF line endings") {
    const std::string code =
        "# Adds.\r\ndef add(a, b):\r\n    return a + b\r\n\r\nprint(add(1, 2))\r\n";
    const auto chunks = chunk_as("python", code);
    const Chunk add = find(chunks, "function", "add");
    CHECK(add.start_line == 1);
    CHECK(add.end_line == 3);
    CHECK(add.doc == "Adds.");
    CHECK(add.signature == "def add(a, b):");
    CHECK(add.text == "# Adds.\r\ndef add(a, b):\r\n    return a + b");
  }
  SECTION("NUL bytes fall back to windows") {
    const std::string code("def f():\n    return 1\n\0\0\0\ndef g():\n    pass\n", 39);
    const auto chunks = chunk_as("python", code);
    REQUIRE_FALSE(chunks.empty());
  }
  SECTION("invalid UTF-8") {
    const std::string code = "def f():\n    return '\xff\xfe\xc3'\n\ndef g\xe9():\n    pass\n";
    const auto chunks = chunk_as("python", code);
    CHECK(find(chunks, "function", "f").end_line == 2);
  }
  SECTION("a language name that does not match the content") {
    chunk_as("rust", k_python_sample);
    chunk_as("lua", k_cpp_sample);
    chunk_as("php", "no php open tag here\nfunction x() {}\n");
  }
  SECTION("very deep nesting") {
    std::string code = "x = ";
    for (int i = 0; i < 20000; ++i) code += "[";
    for (int i = 0; i < 20000; ++i) code += "]";
    code += "\n";
    chunk_as("python", code);
  }
  SECTION("deeply nested definitions") {
    std::string code;
    for (int i = 0; i < 200; ++i)
      code += std::string(static_cast<std::size_t>(i) * 2, ' ') + "function f" + std::to_string(i) +
              "() {\n";
    for (int i = 199; i >= 0; --i)
      code += std::string(static_cast<std::size_t>(i) * 2, ' ') + "}\n";
    const auto chunks = chunk_as("javascript", code);
    // Duplication is bounded: nested functions are emitted one level deep, so the chunks'
    // text stays within a small multiple of the file.
    std::size_t total = 0;
    for (const Chunk& chunk : chunks) total += chunk.text.size();
    CHECK(total <= 4 * code.size());
  }
  SECTION("many definitions on one long line") {
    std::string code;
    for (int i = 0; i < 3000; ++i)
      code += "function f" + std::to_string(i) + "() { return " + std::to_string(i) + "; } ";
    code += "\n";
    const auto chunks = chunk_as("javascript", code);
    std::size_t total = 0;
    for (const Chunk& chunk : chunks) total += chunk.text.size();
    CHECK(total <= 5 * code.size());
  }
  SECTION("garbage") {
    std::string code;
    for (int i = 0; i < 5000; ++i) code += static_cast<char>((i * 7919 + 13) % 254 + 1);
    for (const char* language :
         {"python", "cpp", "ruby", "lua", "swift", "kotlin", "bash", "php"}) {
      INFO(language);
      chunk_as(language, code);
    }
  }
}

TEST_CASE("parse::Chunker: a parse that runs out of time falls back to windows") {
  std::string code;
  for (int i = 0; i < 40000; ++i) code += "def f" + std::to_string(i) + "(x):\n    return x\n";
  const auto chunks = chunk_as("python", code, ChunkerOptions{40, 150, 1});
  REQUIRE_FALSE(chunks.empty());
  for (const Chunk& chunk : chunks) REQUIRE(chunk.kind == "block");
  // The next file parses normally: a cancelled parse leaves nothing behind.
  Chunker chunker(ChunkerOptions{40, 150, 1});
  chunker.chunk("big.py", "python", code);
  const auto small = chunker.chunk("a.py", "python", "def g():\n    pass\n");
  REQUIRE(small.size() == 1);
  CHECK(small[0].symbol == "g");
}

TEST_CASE("parse::Chunker: decorators and attributes belong to their definition") {
  const std::string typescript =
      "@Component({ selector: \"app\" })\n"
      "export class AppComponent {\n"
      "  // Handles clicks.\n"
      "  @HostListener(\"click\")\n"
      "  onClick(): void {\n"
      "    go();\n"
      "  }\n"
      "}\n";
  check_expected(
      chunk_as("typescript", typescript),
      {
          {"class", "AppComponent", "", 1, 2, "", "export class AppComponent"},
          {"method", "onClick", "AppComponent", 3, 8, "Handles clicks.", "onClick(): void"},
      });
  const std::string python =
      "# Registry of things.\n"
      "@dataclass\n"
      "class Thing:\n"
      "    name: str\n"
      "\n"
      "    @property\n"
      "    def label(self):\n"
      "        return self.name\n";
  check_expected(chunk_as("python", python),
                 {
                     {"class", "Thing", "", 1, 4, "Registry of things.", "class Thing:"},
                     {"method", "label", "Thing", 6, 8, "", "def label(self):"},
                 });
}

TEST_CASE("parse::Chunker: code sharing the first line is not in the signature") {
  const std::string code = "run(() => 1); function after(x) {\n  return x;\n}\n";
  const Chunk after = find(chunk_as("javascript", code), "function", "after");
  CHECK(after.signature == "function after(x)");
  CHECK(after.start_line == 1);
}

TEST_CASE("parse::Chunker: a C typedef of a named enum or struct is one chunk") {
  const auto chunks = chunk_as("c",
                               "typedef enum Color {\n    RED,\n    GREEN\n} Color;\n\n"
                               "typedef struct point {\n    int x;\n} point_t;\n");
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0].kind == "enum");
  CHECK(chunks[0].symbol == "Color");
  CHECK(chunks[0].start_line == 1);
  CHECK(chunks[0].end_line == 4);
  CHECK(chunks[1].kind == "struct");
  CHECK(chunks[1].symbol == "point_t");
  CHECK(chunks[1].start_line == 6);
  CHECK(chunks[1].end_line == 8);
}
