// Reading a file that a user or a checkpoint names, without trusting what it is. See Note
// [Bounded reads].
#pragma once

#include <cstdint>
#include <string>

namespace wc {

// Note [Bounded reads]
// A path on the command line or inside a checkpoint's config may name anything: a FIFO (an
// ordinary open would wait for a writer forever), a device such as /dev/zero (endless), a
// folder, or a file far larger than its kind ever is. Every such input is read through
// read_bounded_file: opened non-blocking, refused unless a regular file, refused when larger
// than the limit of its kind (stated in the error), then read whole; a file that shrinks while
// it is read is refused too. Errors name the path and the kind ("model config", "codebook").
std::string read_bounded_file(const std::string& path, int64_t max_bytes, const std::string& kind);

}  // namespace wc
