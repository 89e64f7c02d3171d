//===- ParseChoice.h - A flag's value from a fixed list ---------*- C++ -*-===//
//
// Flags that take one of a few words (--backend cpu|cuda, --comm
// inprocess|mpi, --cuda-graph on|off) are parsed by one function, so that
// every refusal reads the same: "--backend must be 'cpu' or 'cuda', got
// 'gpu'".
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_PARSECHOICE_H
#define TPC_RUNTIME_SUPPORT_PARSECHOICE_H

#include "base/Status.h"

#include <initializer_list>
#include <string>

namespace tpc {

/// A word a flag accepts and the value it stands for.
template <class T> struct Choice {
  const char *word;
  T value;
};

/// Sets `out` to the value of the word `text` among `choices`; anything else
/// is INVALID_ARGUMENT, naming `flag` and the words it takes.
template <class T>
Status parseChoice(const std::string &flag, const std::string &text,
                   std::initializer_list<Choice<T>> choices, T &out) {
  std::string words;
  size_t index = 0;
  for (const Choice<T> &c : choices) {
    if (text == c.word) {
      out = c.value;
      return Status::ok();
    }
    if (index++ > 0)
      words += index == choices.size() ? " or " : ", ";
    words += "'" + std::string(c.word) + "'";
  }
  return Status::invalidArgument(flag + " must be " + words + ", got '" + text +
                                 "'");
}

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_PARSECHOICE_H
