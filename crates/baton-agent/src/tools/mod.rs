//! The built-in tools: shell, files, search. Engine, memory and recall tools live with what
//! they reach into.
