// Answers a script's kernel questions from an earlier start, or asks.
#include "script/kernel_answers.h"

#include <charconv>

namespace mt {

const KernelAnswers::Answer &KernelAnswers::answer(
    const std::string &question, const std::function<Answer()> &ask,
    const std::function<bool(const Answer &)> &shaped) {
  auto found = known_.find(question);
  if (found != known_.end() && shaped(found->second))
    return found->second;
  asked_ = true;
  return known_[question] = ask();
}

bool KernelAnswers::is_number(const std::string &text, uint64_t below) {
  uint64_t n = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() && n < below;
}

}  // namespace mt
