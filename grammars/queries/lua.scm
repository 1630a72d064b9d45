; Tag queries for Lua (the npm grammar ships none): global and local functions.
(function_definition_statement name: (_) @name) @definition.function
(local_function_definition_statement name: (_) @name) @definition.function
