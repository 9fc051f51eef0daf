#include "engine/hello_environment.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kvault {
namespace {

const Json kAnswer{{"protocol", 1},
                   {"device", {{"name", "cpu"}}},
                   {"build", {{"include_paths", {"/inc"}}}},
                   {"available_backends", {"cpu"}},
                   {"unavailable_reasons", {{"cuda", "no GPU"}}}};

TEST(HelloEnvironment, TheFirstAsksAndTheOthersTakeItsAnswer) {
  HelloEnvironment shared;
  EXPECT_TRUE(shared.Claim());   // the first asks
  EXPECT_FALSE(shared.Claim());  // the others do not
  shared.Publish(kAnswer);
  EXPECT_FALSE(shared.Claim());
  auto known = shared.Await();
  ASSERT_TRUE(known);
  Json other{{"protocol", 1}, {"device", {{"name", "cpu"}}}};  // greeted without it
  HelloEnvironment::Complete(other, *known);
  EXPECT_EQ(other, kAnswer);
  EXPECT_FALSE(known->contains("device"));  // the worker's own fields stay its own
}

TEST(HelloEnvironment, OthersWaitForTheFirstsAnswer) {
  HelloEnvironment shared;
  ASSERT_TRUE(shared.Claim());
  std::atomic<bool> answered{false};
  std::optional<Json> got;
  std::thread other([&] {
    got = shared.Await();
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(answered);
  shared.Publish(kAnswer);
  other.join();
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["build"], kAnswer["build"]);
}

TEST(HelloEnvironment, AFailedFirstPassesTheClaimOn) {
  HelloEnvironment shared;
  ASSERT_TRUE(shared.Claim());
  std::optional<Json> got = Json("unset");
  std::thread other([&] { got = shared.Await(); });
  shared.Release();  // its worker did not answer
  other.join();
  EXPECT_FALSE(got);             // the waiter asks in its place ...
  EXPECT_FALSE(shared.Claim());  // ... and holds the claim
}

}  // namespace
}  // namespace kvault
