// Writing all of a buffer to a descriptor, through short writes and EINTR.
#pragma once
#include <cstddef>
#include <string_view>

namespace mt {

// False on an error (errno says which), with part of BYTES perhaps written.
bool write_all(int fd, std::string_view bytes);

// The same for an output, which may be a pipe or FIFO whose reader is slow
// or stopped reading: it waits for room, in pieces a full pipe takes
// without blocking, and gives up (ETIMEDOUT) once a stop is requested
// (stop_request.h) and the reader took nothing for a second. The bytes
// written.
size_t write_output(int fd, const char *data, size_t size);

// What an output's write error says: strerror's text, or for ETIMEDOUT
// that its reader stopped reading.
std::string_view output_error_text(int error);

}  // namespace mt
