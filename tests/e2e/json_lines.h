// moontrace's -f json output, one object a line, parsed for the tests.
#pragma once
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace e2e {

// Every line of `out` parsed as JSON; a line that is not JSON fails the test.
inline std::vector<nlohmann::json> json_lines(const std::string &out) {
  std::vector<nlohmann::json> objects;
  for (const auto &line : lines(out)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    objects.push_back(j);
  }
  return objects;
}

// The data of the first object of type `type`; null (and a failure) if none.
inline nlohmann::json data_of_type(const std::vector<nlohmann::json> &objects,
                                   const std::string &type) {
  for (const auto &o : objects)
    if (o.is_object() && o.value("type", "") == type)
      return o["data"];
  ADD_FAILURE() << "no output of type " << type;
  return nullptr;
}

}  // namespace e2e
