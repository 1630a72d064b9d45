; Tag queries for Bash (tree-sitter-bash ships none): shell functions, in both the
; `name() { … }` and the `function name { … }` forms.
(function_definition name: (word) @name) @definition.function
