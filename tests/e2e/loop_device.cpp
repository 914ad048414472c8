// Sets up and tears down the private loop device of the block-layer tests.
#include "tests/e2e/loop_device.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace e2e {

namespace {

[[noreturn]] void fail(const std::string &what, int err = errno) {
  throw std::runtime_error("LoopDevice: " + what +
                           (err ? ": " + std::string(std::strerror(err)) : ""));
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// Sysfs wants one write(2) of the value; report why it refused.
bool write_sysfs(const std::string &path, const std::string &value, int *err) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && write(fd, value.data(), value.size()) == (ssize_t)value.size();
  *err = ok ? 0 : errno;
  if (fd >= 0)
    close(fd);
  return ok;
}

}  // namespace

LoopDevice::LoopDevice(uint64_t size, bool direct_io) : size_(size) {
  if (geteuid() != 0)
    fail("needs root to attach a loop device", 0);

  // Sparse: only the blocks tests write take space.
  std::string backing = dir_.file("backing.img");
  int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | (direct_io ? O_DIRECT : 0);
  int file = open(backing.c_str(), flags, 0600);
  if (file < 0)
    fail("create " + backing);
  if (ftruncate(file, (off_t)size) != 0) {
    int err = errno;
    close(file);
    fail("size " + backing, err);
  }

  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) {
    int err = errno;
    close(file);
    fail("open /dev/loop-control (is the loop module loaded?)", err);
  }
  // Another process may bind the free device between GET_FREE and
  // CONFIGURE: then LOOP_CONFIGURE says EBUSY and we ask again.
  int err = 0;
  for (int attempt = 0; attempt < 20 && fd_ < 0; attempt++) {
    int n = ioctl(control, LOOP_CTL_GET_FREE);
    if (n < 0) {
      err = errno;
      break;
    }
    std::string path = "/dev/loop" + std::to_string(n);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
      close(control);
      close(file);
      fail("open " + path, err);
    }
    loop_config config{};
    config.fd = (uint32_t)file;
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR | (direct_io ? LO_FLAGS_DIRECT_IO : 0);
    std::snprintf(reinterpret_cast<char *>(config.info.lo_file_name), LO_NAME_SIZE, "%s",
                  backing.c_str());
    if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
      fd_ = fd;
      path_ = path;
      name_ = "loop" + std::to_string(n);
    } else {
      err = errno;
      close(fd);
      if (err != EBUSY)
        break;
    }
  }
  close(control);
  close(file);  // the loop driver holds its own reference
  if (fd_ < 0)
    fail("attach " + backing + " to a free loop device (LOOP_CONFIGURE)", err);

  struct stat st;
  if (fstat(fd_, &st) != 0) {
    err = errno;
    detach();
    fail("stat " + path_, err);
  }
  dev_ = ((uint64_t)major(st.st_rdev) << 20) | minor(st.st_rdev);

  std::string nomerges = "/sys/block/" + name_ + "/queue/nomerges";
  old_nomerges_ = trimmed(read_file(nomerges));
  if (!write_sysfs(nomerges, "2", &err)) {
    old_nomerges_.clear();
    detach();
    fail("write 2 to " + nomerges, err);
  }
  if (direct_io && !this->direct_io()) {
    detach();
    fail("the loop driver refused direct I/O on " + backing, 0);
  }
}

LoopDevice::~LoopDevice() {
  detach();
}

void LoopDevice::detach() {
  if (fd_ < 0)
    return;
  if (!old_nomerges_.empty()) {
    int ignored;
    write_sysfs("/sys/block/" + name_ + "/queue/nomerges", old_nomerges_, &ignored);
  }
  // With our fd as the only opener this detaches now; otherwise autoclear
  // detaches at the last close.
  ioctl(fd_, LOOP_CLR_FD, 0);
  close(fd_);
  fd_ = -1;
}

bool LoopDevice::direct_io() const {
  return trimmed(read_file("/sys/block/" + name_ + "/loop/dio")) == "1";
}

std::vector<uint64_t> LoopDevice::stat() const {
  std::istringstream in(read_file("/sys/block/" + name_ + "/stat"));
  std::vector<uint64_t> fields;
  for (uint64_t v; in >> v;)
    fields.push_back(v);
  return fields;
}

uint64_t LoopDevice::writes_completed() const {
  auto fields = stat();
  if (fields.size() < 5)
    throw std::runtime_error("LoopDevice: cannot parse /sys/block/" + name_ + "/stat");
  return fields[4];
}

Ext4Mount::Ext4Mount(uint64_t size) : loop_(size) {
  // Inode tables and journal written now, not by a kernel thread later.
  auto mkfs = run({{"/sbin/mkfs.ext4", "-q", "-F", "-E",
                    "lazy_itable_init=0,lazy_journal_init=0,nodiscard", loop_.path()}},
                  60s);
  if (mkfs.exit_code != 0)
    throw std::runtime_error("Ext4Mount: mkfs.ext4 " + loop_.path() +
                             " failed (is e2fsprogs "
                             "installed?): " +
                             mkfs.err);
  if (mount(loop_.path().c_str(), dir().c_str(), "ext4", 0, nullptr) != 0)
    fail("mount " + loop_.path() + " on " + dir());
  mounted_ = true;
}

Ext4Mount::~Ext4Mount() {
  if (mounted_ && umount(dir().c_str()) != 0)
    umount2(dir().c_str(), MNT_DETACH);
}

Command direct_writes(const std::string &dev, uint64_t count, uint64_t size, bool start_stopped) {
  return {{workload("direct_writes"), dev, std::to_string(count), std::to_string(size)},
          {},
          start_stopped};
}

}  // namespace e2e
