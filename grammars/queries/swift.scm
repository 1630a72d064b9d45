; Tag queries for Swift: the shipped tags.scm captures a whole class as a "method" once per
; member. Here classes, structs, enums, extensions and actors are told apart by their
; declaration keyword, and functions in them become methods by nesting.

(class_declaration declaration_kind: "class" name: (_) @name) @definition.class
(class_declaration declaration_kind: "actor" name: (_) @name) @definition.class
(class_declaration declaration_kind: "struct" name: (_) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (_) @name) @definition.enum
(class_declaration declaration_kind: "extension" name: (_) @name) @definition.impl
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration name: "init" @name) @definition.method
(deinit_declaration "deinit" @name) @definition.method
(typealias_declaration name: (type_identifier) @name) @definition.type
