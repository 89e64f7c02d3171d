//===- StatusAssert.h - GoogleTest assertions on tpc::Status ----*- C++ -*-===//
#ifndef TPC_TEST_UNIT_RUNTIME_STATUSASSERT_H
#define TPC_TEST_UNIT_RUNTIME_STATUSASSERT_H

#include "kernels/Types.h"

#include <gtest/gtest.h>

#include <string>

namespace tpc::test {

/// Success, or a failure that prints the status message.
inline ::testing::AssertionResult isOk(const Status &st) {
  if (st)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << st.message();
}

/// Whether `s` contains `part` (for checking messages).
inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

} // namespace tpc::test

#define ASSERT_OK(expr) ASSERT_TRUE(::tpc::test::isOk(expr))
#define EXPECT_OK(expr) EXPECT_TRUE(::tpc::test::isOk(expr))

#endif // TPC_TEST_UNIT_RUNTIME_STATUSASSERT_H
