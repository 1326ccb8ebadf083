#include "store/StoreError.h"

#include <exception>
#include <ostream>

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

namespace switchboard::store {

std::string_view to_string(StoreError::Code code) {
  switch (code) {
    case StoreError::Code::NotFound:
      return "not found";
    case StoreError::Code::Conflict:
      return "conflict";
    case StoreError::Code::Io:
      return "i/o error";
    case StoreError::Code::Corrupt:
      return "corrupt";
    case StoreError::Code::Busy:
      return "busy";
    case StoreError::Code::Full:
      return "full";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, const StoreError& error) {
  return out << to_string(error.code) << ": " << error.message;
}

namespace {

StoreError::Code classify(int extended_code) {
  // A missing parent row is what a caller means by "not found" (a run for an unknown session).
  if (extended_code == SQLITE_CONSTRAINT_FOREIGNKEY) return StoreError::Code::NotFound;
  switch (extended_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StoreError::Code::Busy;
    case SQLITE_FULL:
      return StoreError::Code::Full;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return StoreError::Code::Corrupt;
    case SQLITE_CONSTRAINT:
      return StoreError::Code::Conflict;
    case SQLITE_NOTFOUND:
      return StoreError::Code::NotFound;
    default:
      return StoreError::Code::Io;
  }
}

}  // namespace

StoreError error_from_current_exception(std::string_view context) {
  std::string prefix(context);
  if (!prefix.empty()) prefix += ": ";
  try {
    throw;
  } catch (const SQLite::Exception& e) {
    // SQLiteCpp reports its own misuse (bad column index…) with code -1; those are bugs of ours, but they
    // still must not escape as exceptions, so they surface as Io with the text.
    const int code = e.getExtendedErrorCode() > 0 ? e.getExtendedErrorCode() : e.getErrorCode();
    return StoreError{code > 0 ? classify(code) : StoreError::Code::Io, prefix + e.what()};
  } catch (const std::bad_alloc&) {
    return StoreError{StoreError::Code::Io, prefix + "out of memory"};
  } catch (const std::exception& e) {
    return StoreError{StoreError::Code::Io, prefix + e.what()};
  } catch (...) {
    return StoreError{StoreError::Code::Io, prefix + "unknown exception"};
  }
}

}  // namespace switchboard::store
