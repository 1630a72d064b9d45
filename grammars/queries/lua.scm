; Tag queries for Lua (@tree-sitter-grammars/tree-sitter-lua). Captures follow tags.scm; our
; own @parent names the table a function is stored in (`M` of `function M.add()`).

; function M.add() / function M.sub.deep()
(function_declaration
  name: (dot_index_expression table: (_) @parent field: (identifier) @name)) @definition.function

; function Account:deposit()
(function_declaration
  name: (method_index_expression table: (_) @parent method: (identifier) @name)) @definition.method

; function global() / local function helper()
(function_declaration name: (identifier) @name) @definition.function

; M.mul = function() … end
(assignment_statement
  (variable_list . name: (dot_index_expression table: (_) @parent field: (identifier) @name))
  (expression_list . value: (function_definition))) @definition.function

; mul = function() … end (also inside `local mul = function() … end`)
(assignment_statement
  (variable_list . name: (identifier) @name)
  (expression_list . value: (function_definition))) @definition.function
