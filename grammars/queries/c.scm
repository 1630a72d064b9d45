; Tag queries for C: the shipped tags.scm captures function declarators (the `f(int x)` part,
; prototypes too) rather than whole definitions; these capture definitions with bodies.

; The whole declarator is @name: the chunker finds the function's name in it (`*f(int)` → f).
; One pattern per depth of pointers would cost much more to compile (see name_of_declarator
; in core/parse/chunker.cpp).
(function_definition declarator: (_) @name) @definition.function

(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum

; typedef struct { … } name;
(type_definition type: (struct_specifier body: (_)) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (union_specifier body: (_)) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (enum_specifier body: (_)) declarator: (type_identifier) @name) @definition.enum

; function-like macros
(preproc_function_def name: (identifier) @name) @definition.macro
