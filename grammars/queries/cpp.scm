; Tag queries for C++: the shipped tags.scm captures function declarators (the `f(int x)`
; part, prototypes too) rather than whole definitions. These capture definitions with bodies,
; template declarations whole (so `template <…>` is in the chunk), and out-of-line members
; `Foo::bar` as methods (their name's `Foo::` becomes the chunk's parent).

; template <…> definitions: listed first, the inner definition is then dropped as the same one
(template_declaration
  (function_definition
    declarator: (function_declarator declarator: (qualified_identifier) @name))) @definition.method
(template_declaration
  (function_definition
    declarator: (_ declarator: (function_declarator declarator: (qualified_identifier) @name)))) @definition.method
(template_declaration
  (function_definition
    declarator: (function_declarator declarator: (_) @name))) @definition.function
(template_declaration
  (function_definition
    declarator: (_ declarator: (function_declarator declarator: (_) @name)))) @definition.function
(template_declaration (class_specifier name: (_) @name body: (_))) @definition.class
(template_declaration (struct_specifier name: (_) @name body: (_))) @definition.struct

; Foo::bar() out of line
(function_definition
  declarator: (function_declarator declarator: (qualified_identifier) @name)) @definition.method
(function_definition
  declarator: (_ declarator: (function_declarator declarator: (qualified_identifier) @name))) @definition.method
(function_definition
  declarator: (_ declarator: (_ declarator: (function_declarator declarator: (qualified_identifier) @name)))) @definition.method

; free functions, and members defined in their class (nesting makes those methods)
(function_definition
  declarator: (function_declarator declarator: (_) @name)) @definition.function
(function_definition
  declarator: (_ declarator: (function_declarator declarator: (_) @name))) @definition.function
(function_definition
  declarator: (_ declarator: (_ declarator: (function_declarator declarator: (_) @name)))) @definition.function

(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name body: (_)) @definition.module
(concept_definition name: (_) @name) @definition.type

(preproc_function_def name: (identifier) @name) @definition.macro
