// Answers a script's kernel questions from an earlier start, or asks.
#include "script/kernel_answers.h"

#include <charconv>

#include "common/field_codec.h"

namespace mt {

const KernelAnswers::Answer &KernelAnswers::answer(
    const std::string &question, const std::function<Answer()> &ask,
    const std::function<bool(const Answer &)> &shaped, bool keep) {
  if (!keep)
    return unkept_[question] = ask();
  auto found = known_.find(question);
  if (found != known_.end() && shaped(found->second))
    return found->second;
  asked_ = true;
  return known_[question] = ask();
}

std::string KernelAnswers::question(const std::string &kind,
                                    const std::vector<std::string> &names) {
  return FieldWriter().str(kind).strs(names).bytes();
}

bool KernelAnswers::integer(const std::string &text, int64_t &n) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

}  // namespace mt
