; Tag queries for C: the shipped tags.scm captures function declarators (the `f(int x)` part,
; prototypes too) rather than whole definitions; these capture definitions with bodies.

(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (_ declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition
  declarator: (_ declarator: (_ declarator: (function_declarator declarator: (identifier) @name)))) @definition.function

(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum

; typedef struct { … } name;
(type_definition type: (struct_specifier body: (_)) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (union_specifier body: (_)) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (enum_specifier body: (_)) declarator: (type_identifier) @name) @definition.enum

; function-like macros
(preproc_function_def name: (identifier) @name) @definition.macro
