; Tag queries for Kotlin (the npm grammar ships none): classes, objects, functions.
(class_declaration (type_identifier) @name) @definition.class
(function_declaration (simple_identifier) @name) @definition.function
