//! Writes to the host's log, attributed to the plugin. Always granted.
//!
//! These functions call the host, so they only work inside a component
//! (on a native target they panic).

use crate::bindings::kaizen::plugin::log::log;
use crate::bindings::kaizen::plugin::types::LogLevel;

/// Logs a message at trace level.
pub fn trace(message: impl AsRef<str>) {
    log(LogLevel::Trace, message.as_ref());
}

/// Logs a message at debug level.
pub fn debug(message: impl AsRef<str>) {
    log(LogLevel::Debug, message.as_ref());
}

/// Logs a message at info level.
pub fn info(message: impl AsRef<str>) {
    log(LogLevel::Info, message.as_ref());
}

/// Logs a message at warn level.
pub fn warn(message: impl AsRef<str>) {
    log(LogLevel::Warn, message.as_ref());
}

/// Logs a message at error level.
pub fn error(message: impl AsRef<str>) {
    log(LogLevel::Error, message.as_ref());
}
