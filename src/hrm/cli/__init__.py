"""The `hrm` command line. Commands only parse, call the library and render."""
