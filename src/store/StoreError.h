#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include <boost/system/result.hpp>
#include <fmt/ostream.h>

namespace switchboard::store {

// An expected failure of the store, as a value: SQLite::Exception never leaves src/store/ (style §2.3). The
// message is lower-case, names what was being done and is safe to log or show a user.
struct StoreError {
  enum class Code {
    NotFound,  // no such row (or a referenced row is missing)
    Conflict,  // the row exists already, or the file belongs to a newer switchboard / another program
    Io,        // cannot open, read or write the file (permissions, missing directory, I/O error)
    Corrupt,   // the file is not a SQLite database, or SQLite found it damaged
    Busy,      // another process held a lock for longer than the busy timeout
    Full,      // the disk (or the configured size cap) is full
  };

  Code code = Code::Io;
  std::string message;
};

std::string_view to_string(StoreError::Code code);
// "<code>: <message>", for logs and test output (boost::system::result prints its error with it).
std::ostream& operator<<(std::ostream& out, const StoreError& error);

// result<T, StoreError>: check it (`if (!r)`), then use `*r` or `r.error()`. Its value() does not compile on
// purpose (no throw_exception_from_error for StoreError): a store failure is never turned into an exception.
template <class T>
using StoreResult = boost::system::result<T, StoreError>;

// Results are delivered on the reactor thread (see StoreWorker).
template <class T>
using StoreCallback = std::function<void(StoreResult<T>)>;

// The Lippincott function of the store: call it inside a catch block; it classifies the exception in flight
// (SQLite::Exception by its result code, anything else as Io) and prefixes `context` to its message.
StoreError error_from_current_exception(std::string_view context);

}  // namespace switchboard::store

// Lets log lines format a StoreError directly ("<code>: <message>").
template <>
struct fmt::formatter<switchboard::store::StoreError> : fmt::ostream_formatter {};
