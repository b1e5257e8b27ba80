//===- FuzzFile.h - A fuzz input as a file ----------------------*- C++ -*-===//
//
// The readers under test take paths: the input goes to an anonymous
// in-memory file (memfd), named by its /proc/self/fd path.
//
//===----------------------------------------------------------------------===//

#ifndef GS_TEST_FUZZ_FUZZFILE_H
#define GS_TEST_FUZZ_FUZZFILE_H

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

class FuzzFile {
public:
  FuzzFile(const uint8_t *data, size_t size) {
    fd = ::memfd_create("gs-fuzz", MFD_CLOEXEC);
    if (fd < 0)
      std::abort();
    for (size_t done = 0; done < size;) {
      ssize_t written = ::write(fd, data + done, size - done);
      if (written <= 0)
        std::abort();
      done += static_cast<size_t>(written);
    }
    name = "/proc/self/fd/" + std::to_string(fd);
  }
  ~FuzzFile() { ::close(fd); }
  const std::string &path() const { return name; }

private:
  int fd;
  std::string name;
};

#endif // GS_TEST_FUZZ_FUZZFILE_H
