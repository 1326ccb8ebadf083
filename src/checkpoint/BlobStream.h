#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace switchboard::checkpoint {

// Reads the output of `git cat-file --batch` as it arrives, in chunks cut anywhere: for each object asked for,
// a header line (`<id> <type> <size>`, or `<id> missing`), then that many bytes and a newline. Each object is
// handed on whole, in the order asked for; only one object's content is held at a time.
class BlobStream {
 public:
  // `content` is empty and `missing` true for an object the store does not have.
  using OnObject = std::function<void(std::size_t index, std::string_view content, bool missing)>;

  explicit BlobStream(OnObject on_object) : m_on_object(std::move(on_object)) {}

  // False once the output cannot be parsed (the caller stops reading).
  bool feed(std::string_view chunk);
  std::size_t objects_seen() const { return m_index; }

 private:
  enum class Expect { Header, Content, Newline };
  OnObject m_on_object;
  Expect m_expect = Expect::Header;
  std::string m_buffer;  // the header so far, then the content so far
  std::size_t m_size = 0;
  std::size_t m_index = 0;
};

}  // namespace switchboard::checkpoint
