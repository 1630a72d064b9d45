; Tag queries for C++: the shipped tags.scm captures function declarators (the `f(int x)`
; part, prototypes too) rather than whole definitions. These capture definitions with bodies,
; template declarations whole (so `template <…>` is in the chunk), and out-of-line members
; `Foo::bar` as methods (their name's `Foo::` becomes the chunk's parent).

; A function's whole declarator is @name: the chunker finds the name in it (`*f(int)` → f,
; `Foo::bar(int)` → Foo::bar, which makes a method of Foo). One pattern per depth of pointers
; and per kind of name cost 775M instructions to compile (see name_of_declarator in
; core/parse/chunker.cpp).

; template <…> definitions: listed first, the inner definition is then dropped as the same one
(template_declaration (function_definition declarator: (_) @name)) @definition.function
(template_declaration (class_specifier name: (_) @name body: (_))) @definition.class
(template_declaration (struct_specifier name: (_) @name body: (_))) @definition.struct

; free functions, members defined in their class (nesting makes those methods) and out of
; line (`Foo::bar`)
(function_definition declarator: (_) @name) @definition.function

(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name body: (_)) @definition.module
(concept_definition name: (_) @name) @definition.type

(preproc_function_def name: (identifier) @name) @definition.macro
