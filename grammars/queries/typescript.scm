; Tag queries for TypeScript and TSX. The shipped files (JavaScript's tags.scm plus
; TypeScript's) leave out enums and type aliases, tag each member signature of an interface
; (one-line chunks), and tag `const f = () => …` by its declarator, without `const`/`export`.

(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(enum_declaration name: (_) @name) @definition.enum
(type_alias_declaration name: (_) @name) @definition.type
(internal_module name: (_) @name) @definition.module
(module name: (_) @name) @definition.module

(function_declaration name: (_) @name) @definition.function
(generator_function_declaration name: (_) @name) @definition.function
(method_definition name: (_) @name) @definition.method

; const f = () => …, let g = function () {…}
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; exports.f = function () {…}, this.onClick = () => …
(expression_statement
  (assignment_expression
    left: [(identifier) @name (member_expression property: (property_identifier) @name)]
    right: [(arrow_function) (function_expression)])) @definition.function

; class fields holding functions: handleClick = () => …
(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method

; object literal members: { f: () => …, g: function () {…} }
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
