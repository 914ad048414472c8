// Writing all of a buffer to a descriptor, through short writes and EINTR.
#pragma once
#include <string_view>

namespace mt {

// False on an error (errno says which), with part of BYTES perhaps written.
bool write_all(int fd, std::string_view bytes);

}  // namespace mt
