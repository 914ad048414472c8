// The content hashes: every byte and part boundary changes the hash.
#include "common/hash.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/sha256.h"

namespace mt {
namespace {

template <class Hash>
std::set<std::string> hashes_of_near_inputs() {
  std::set<std::string> seen;
  std::string base(37, 'a');
  seen.insert(Hash().add(base).hex());
  seen.insert(Hash().add("").hex());
  seen.insert(Hash().add(std::string(1, '\0')).hex());  // a zero tail is not no tail
  seen.insert(Hash().add(std::string(8, '\0')).hex());
  for (size_t i = 0; i < base.size(); i++) {  // each byte, in whole words and in the tail
    std::string changed = base;
    changed[i] = 'b';
    seen.insert(Hash().add(changed).hex());
  }
  seen.insert(Hash().add(base.substr(0, 8)).add(base.substr(8)).hex());  // parts, not one
  seen.insert(Hash().add(base.substr(0, 9)).add(base.substr(9)).hex());
  return seen;
}

TEST(Sha256Parts, TellsApartInputsThatDifferInOneByteOrPart) {
  EXPECT_EQ(hashes_of_near_inputs<Sha256Parts>().size(), 4u + 37 + 2);
  // SHA-256 of the part and then its length, 8 bytes little-endian.
  EXPECT_EQ(Sha256Parts().add("abc").hex(), sha256_hex(std::string("abc\3\0\0\0\0\0\0\0", 11)));
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string_view()), sha256_hex(""));  // no data at all
}

TEST(ContentHash, TellsApartInputsThatDifferInOneByteOrPart) {
  EXPECT_EQ(hashes_of_near_inputs<ContentHash>().size(), 4u + 37 + 2);
  // Package digests are written in shared files: the value may not change.
  EXPECT_EQ(ContentHash().add("moontrace").hex(), "6f8782c56b0f3c20ce115c3b0b118ccc");
}

}  // namespace
}  // namespace mt
