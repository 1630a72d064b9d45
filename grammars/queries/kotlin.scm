; Tag queries for Kotlin (tree-sitter-kotlin 0.3.8 ships none). One node type covers classes,
; interfaces and enum classes: the keyword or the enum body tells them apart (earlier
; patterns win for the same node).

(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration (type_identifier) @name (enum_class_body)) @definition.enum
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.object
(companion_object (type_identifier) @name) @definition.object
(function_declaration (simple_identifier) @name) @definition.function
(secondary_constructor "constructor" @name) @definition.constructor
(type_alias (type_identifier) @name) @definition.type
