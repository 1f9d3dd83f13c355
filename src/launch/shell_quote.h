// Quoting for POSIX shells (sh, bash): every user-supplied string that reaches a generated batch
// script goes through ShellQuote, so it is one word with no expansion whatever it contains.
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace slurmfleet::launch {

// `s` as one shell word. Left bare when it is not empty and holds only characters that are
// special nowhere in a word ([A-Za-z0-9_@%+:,./-]); otherwise wrapped in single quotes, with
// each ' written as '\''. Newlines, $, `, globs, spaces and '=' (which could make a word an
// assignment) all end up inside quotes. The empty string becomes ''.
std::string ShellQuote(std::string_view s);

}  // namespace slurmfleet::launch
