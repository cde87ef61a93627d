/// Greets `name`.
pub fn greet(name: &str) -> String {
    format!("Hello, {name}!")
}
