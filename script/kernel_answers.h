// What a script asked of the kernel while declaring (available(),
// arguments(), has_field(), enum_value(), script{} requirements) and the
// answers, kept so that a later start on the same kernel answers from
// them without reading the kernel's BTF (app/front_end_cache.h).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mt {

class KernelAnswers {
 public:
  using Answer = std::vector<std::string>;
  using Answers = std::map<std::string, Answer>;

  // Answers from an earlier start on this kernel.
  void replay(Answers answers) { known_ = std::move(answers); }
  // The answer to QUESTION: a replayed one that has the shape SHAPED
  // expects, else ASK()'s, kept unless KEEP is false (an answer that
  // depends on more than the kernel).
  const Answer &answer(const std::string &question, const std::function<Answer()> &ask,
                       const std::function<bool(const Answer &)> &shaped, bool keep = true);
  // Every answer known now: replayed, and asked this time.
  const Answers &all() const { return known_; }
  // Whether a question had to be asked of the kernel this time.
  bool asked() const { return asked_; }
  // A question: its kind and what it names, written so that no two run
  // together.
  static std::string question(const std::string &kind, const std::vector<std::string> &names);
  // Whether TEXT is a decimal integer, N.
  static bool integer(const std::string &text, int64_t &n);

 private:
  Answers known_;
  Answers unkept_;
  bool asked_ = false;
};

}  // namespace mt
