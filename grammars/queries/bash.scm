; Tag queries for Bash (the npm grammar ships none): shell functions.
(function_definition name: (word) @name) @definition.function
