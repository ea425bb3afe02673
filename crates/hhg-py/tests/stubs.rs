//! Checks that the type stubs (`python/hhg/_native.pyi`) declare exactly what the extension
//! exports: the same classes, functions, methods, attributes and parameter names.
//!
//! The stubs are written by hand, so a method added, renamed or given another keyword in the
//! Rust source without the stubs following would mislead every type checker and IDE. This test
//! reads both files as text (it does not load the extension, which needs Python and numpy).
//! It also makes `cargo test --workspace` build the extension module itself, which `.ci/python`
//! installs into its virtualenv instead of compiling hhg-core a second time.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// What Python sees of a module or of one class: attribute names and methods with their
/// parameter names (`*` marks where the keyword-only parameters begin).
#[derive(Debug, Default, PartialEq, Eq)]
struct Namespace {
    attributes: Vec<String>,
    methods: BTreeMap<String, Vec<String>>,
}

/// The module's functions and classes.
#[derive(Debug, Default, PartialEq, Eq)]
struct Module {
    functions: BTreeMap<String, Vec<String>>,
    classes: BTreeMap<String, Namespace>,
}

/// Methods every Python object has, which the stubs need not repeat.
const INHERITED_FROM_OBJECT: [&str; 2] = ["__repr__", "__str__"];

/// Splits `text` at the commas outside any brackets.
fn split_top_level(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for character in text.chars() {
        match character {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(character);
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|part| part.trim().to_owned())
        .filter(|part| !part.is_empty())
        .collect()
}

/// The text between the bracket at `open` of `text` and its matching closing bracket.
fn bracketed(text: &str, open: usize) -> &str {
    let mut depth = 0;
    for (offset, character) in text[open..].char_indices() {
        match character {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + offset];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses in {text:?}");
}

/// A Rust identifier as Python sees it (`r#box` is `box`).
fn python_name(identifier: &str) -> String {
    identifier.trim().trim_start_matches("r#").to_owned()
}

/// The value of `key = "value"` inside an attribute, if present.
fn quoted_value(attribute: &str, key: &str) -> Option<String> {
    let start = attribute.find(&format!("{key} = \""))? + key.len() + 4;
    let end = attribute[start..].find('"')? + start;
    Some(attribute[start..end].to_owned())
}

/// The parameter names of a `#[pyo3(signature = (...))]` attribute.
fn signature_parameters(attribute: &str) -> Vec<String> {
    let open = attribute
        .find("signature = (")
        .expect("a signature attribute")
        + 12;
    split_top_level(bracketed(attribute, open))
        .iter()
        .map(|item| python_name(item.split('=').next().unwrap_or(item)))
        .collect()
}

/// The Python-visible parameter names of a Rust function whose text starts at `fn`.
fn function_parameters(text: &str) -> Vec<String> {
    let open = text.find('(').expect("a parameter list");
    split_top_level(bracketed(text, open))
        .iter()
        .filter(|argument| !argument.ends_with("self"))
        .filter(|argument| !argument.contains("Python<"))
        .map(|argument| {
            let name = argument.split(':').next().unwrap_or(argument);
            python_name(name.trim_start_matches("mut "))
        })
        .collect()
}

/// The name after `fn ` on a line.
fn function_name(line: &str) -> String {
    let after = &line[line.find("fn ").expect("a function") + 3..];
    after
        .split(['(', '<'])
        .next()
        .unwrap_or(after)
        .trim()
        .to_owned()
}

/// Everything the extension's Rust source exports, read from its `#[pyclass]`, `#[pymethods]`
/// and `#[pyfunction]` items.
fn exported_by_rust(source: &str) -> Module {
    let lines: Vec<&str> = source.lines().collect();
    let mut module = Module::default();
    let mut rust_to_python = BTreeMap::new();
    let mut attributes: Vec<&str> = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let trimmed = line.trim();
        if trimmed.starts_with("#[") {
            attributes.push(trimmed);
            index += 1;
            continue;
        }
        if trimmed.starts_with("///") || trimmed.starts_with("//") {
            index += 1;
            continue;
        }
        let has = |name: &str| {
            attributes
                .iter()
                .any(|attribute| attribute.starts_with(name))
        };
        if has("#[pyclass") && trimmed.contains("struct ") {
            let rust_name = trimmed
                .split("struct ")
                .nth(1)
                .unwrap_or("")
                .split([' ', '<', '{'])
                .next()
                .unwrap_or("");
            let python = attributes
                .iter()
                .find_map(|attribute| quoted_value(attribute, "name"))
                .unwrap_or_else(|| rust_name.to_owned());
            rust_to_python.insert(rust_name.to_owned(), python.clone());
            let class = module.classes.entry(python).or_default();
            let mut field_attributes = Vec::new();
            index += 1;
            while lines[index] != "}" {
                let field = lines[index].trim();
                if field.starts_with("#[") {
                    field_attributes.push(field);
                } else if !field.starts_with("//") {
                    if field_attributes
                        .iter()
                        .any(|attribute| attribute.starts_with("#[pyo3(get"))
                    {
                        let name = field
                            .trim_start_matches("pub ")
                            .split(':')
                            .next()
                            .unwrap_or(field);
                        class.attributes.push(python_name(name));
                    }
                    field_attributes.clear();
                }
                index += 1;
            }
        } else if has("#[pymethods]") && trimmed.starts_with("impl ") {
            let rust_name = trimmed["impl ".len()..]
                .split([' ', '<', '{'])
                .next()
                .unwrap_or("");
            let python = rust_to_python
                .get(rust_name)
                .cloned()
                .unwrap_or_else(|| rust_name.to_owned());
            let class = module.classes.entry(python).or_default();
            let mut method_attributes: Vec<&str> = Vec::new();
            index += 1;
            while lines[index] != "}" {
                let member = lines[index];
                let member_trimmed = member.trim();
                let top_level = member.starts_with("    ") && !member.starts_with("     ");
                if top_level && member_trimmed.starts_with("#[") {
                    method_attributes.push(member_trimmed);
                } else if top_level
                    && member_trimmed.contains("fn ")
                    && !member_trimmed.starts_with("//")
                {
                    let rust_method = function_name(member_trimmed);
                    let renamed = method_attributes
                        .iter()
                        .find_map(|attribute| quoted_value(attribute, "name"));
                    let is = |name: &str| {
                        method_attributes
                            .iter()
                            .any(|attribute| attribute.starts_with(name))
                    };
                    if is("#[getter") {
                        let name = renamed
                            .unwrap_or_else(|| rust_method.trim_start_matches("get_").to_owned());
                        class.attributes.push(name);
                    } else if !is("#[setter") {
                        let name = if is("#[new]") {
                            "__init__".to_owned()
                        } else {
                            renamed.unwrap_or(rust_method)
                        };
                        let parameters = match method_attributes
                            .iter()
                            .find(|attribute| attribute.contains("signature = ("))
                        {
                            Some(attribute) => signature_parameters(attribute),
                            None => function_parameters(&lines[index..].join("\n")),
                        };
                        if !INHERITED_FROM_OBJECT.contains(&name.as_str()) {
                            class.methods.insert(name, parameters);
                        }
                    }
                    method_attributes.clear();
                } else if top_level && !member_trimmed.starts_with("//") {
                    method_attributes.clear();
                }
                index += 1;
            }
        } else if has("#[pyfunction]") && trimmed.contains("fn ") {
            let parameters = match attributes
                .iter()
                .find(|attribute| attribute.contains("signature = ("))
            {
                Some(attribute) => signature_parameters(attribute),
                None => function_parameters(&lines[index..].join("\n")),
            };
            module.functions.insert(function_name(trimmed), parameters);
        }
        attributes.clear();
        index += 1;
    }
    for class in module.classes.values_mut() {
        class.attributes.sort();
    }
    module
}

/// The parameter names of a stub's `def` starting at `text` (without `self`).
fn stub_parameters(text: &str) -> Vec<String> {
    let open = text.find('(').expect("a parameter list");
    split_top_level(bracketed(text, open))
        .iter()
        .map(|parameter| {
            parameter
                .split([':', '='])
                .next()
                .unwrap_or(parameter)
                .trim()
                .to_owned()
        })
        .filter(|name| name != "self")
        .collect()
}

/// Everything the stubs declare: module-level `def`s, classes with their annotated attributes,
/// `@property` definitions and methods.
fn declared_by_stubs(stubs: &str) -> Module {
    let lines: Vec<&str> = stubs.lines().collect();
    let mut module = Module::default();
    let mut class: Option<String> = None;
    let mut property_next = false;
    for (index, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix("class ") {
            let name = name
                .split([':', '('])
                .next()
                .unwrap_or(name)
                .trim()
                .to_owned();
            module.classes.entry(name.clone()).or_default();
            class = Some(name);
        } else if let Some(definition) = line.strip_prefix("def ") {
            class = None;
            let name = definition.split('(').next().unwrap_or("").trim().to_owned();
            module
                .functions
                .insert(name, stub_parameters(&lines[index..].join("\n")));
        } else if !line.starts_with(' ') && !line.is_empty() {
            class = None;
        } else if let Some(class_name) = &class {
            let namespace = module
                .classes
                .get_mut(class_name)
                .expect("the class was added");
            let member = line.strip_prefix("    ").unwrap_or("");
            if member == "@property" {
                property_next = true;
            } else if let Some(definition) = member.strip_prefix("def ") {
                let name = definition
                    .split('(')
                    .next()
                    .unwrap_or(definition)
                    .to_owned();
                if std::mem::take(&mut property_next) {
                    namespace.attributes.push(name);
                } else {
                    namespace
                        .methods
                        .insert(name, stub_parameters(&lines[index..].join("\n")));
                }
            } else if !member.starts_with(' ') && !member.starts_with('"') && member.contains(": ")
            {
                let name = member.split(':').next().unwrap_or(member).trim();
                if name
                    .chars()
                    .all(|character| character.is_alphanumeric() || character == '_')
                {
                    namespace.attributes.push(name.to_owned());
                }
            }
        }
    }
    for namespace in module.classes.values_mut() {
        namespace.attributes.sort();
    }
    module
}

/// The Rust source of the extension, all files of `src/` in one text.
fn rust_source() -> String {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = fs::read_dir(&directory)
        .expect("the crate's src directory")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| fs::read_to_string(path).expect("a source file"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn stubs_declare_exactly_what_the_extension_exports() {
    let stubs_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/hhg/_native.pyi");
    let stubs = fs::read_to_string(stubs_path).expect("the type stubs");
    let exported = exported_by_rust(&rust_source());
    let declared = declared_by_stubs(&stubs);
    assert!(
        exported.classes.len() >= 4 && !exported.functions.is_empty(),
        "the source reader found too little: {exported:#?}"
    );
    assert_eq!(
        exported.functions, declared.functions,
        "module functions (Rust source left, stubs right)"
    );
    assert_eq!(
        exported.classes.keys().collect::<Vec<_>>(),
        declared.classes.keys().collect::<Vec<_>>(),
        "classes (Rust source left, stubs right)"
    );
    for (name, class) in &exported.classes {
        assert_eq!(
            class, &declared.classes[name],
            "class {name} (Rust source left, stubs right)"
        );
    }
}

#[test]
fn the_readers_see_a_renamed_keyword() {
    let rust = "#[pyclass(module = \"hhg\")]\npub struct Thing {\n    #[pyo3(get)]\n    size: f64,\n}\n\n\
                #[pymethods]\nimpl Thing {\n    #[new]\n    fn new(size: f64) -> Self {\n        Self { size }\n    }\n\n    \
                #[pyo3(signature = (points, *, n_threads = None))]\n    fn run(&self, py: Python<'_>, points: &Bound<'_, PyAny>, n_threads: Option<i64>) {}\n}\n";
    let stubs = "class Thing:\n    size: float\n\n    def __init__(self, size: float) -> None: ...\n    \
                 def run(self, points: ArrayLike, *, threads: Optional[int] = None) -> None: ...\n";
    let exported = exported_by_rust(rust);
    let declared = declared_by_stubs(stubs);
    assert_eq!(exported.classes["Thing"].attributes, ["size"]);
    assert_eq!(exported.classes["Thing"].methods["__init__"], ["size"]);
    assert_eq!(
        exported.classes["Thing"].methods["run"],
        ["points", "*", "n_threads"]
    );
    assert_eq!(
        declared.classes["Thing"].methods["run"],
        ["points", "*", "threads"]
    );
    assert_ne!(exported, declared);
}
