// Who leads and who follows in group turns (threads standing in for lanes).
#include "engine/turn_group.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

namespace kvault {
namespace {

// Waits until `lead` has `n` members (a follower has joined).
void AwaitMembers(const TurnGroups::Lead& lead, int n) {
  for (int i = 0; i < 5000 && lead.members() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(lead.members(), n);
}

TEST(TurnGroupsTest, TheFirstToWaitLeadsAlone) {
  auto groups = TurnGroups::For("test-alone");
  TurnMember me;
  auto lead = groups->Join("case", &me, 8);
  ASSERT_TRUE(lead);
  EXPECT_TRUE(lead->Close().empty());
}

TEST(TurnGroupsTest, AFollowerIsTimedByItsLeader) {
  auto groups = TurnGroups::For("test-follow");
  TurnMember leader, follower;
  auto lead = groups->Join("case", &leader, 8);
  ASSERT_TRUE(lead);
  auto followed = std::async(std::launch::async, [&] { return groups->Join("case", &follower, 8).has_value(); });
  AwaitMembers(*lead, 2);
  std::vector<TurnMember*> others = lead->Close();
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0], &follower);
  EXPECT_EQ(followed.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);  // until Finish
  follower.timed.record.speedup = 3.0;  // what the leader's turn wrote
  lead->Finish();
  EXPECT_FALSE(followed.get());  // timed, not leading
  EXPECT_EQ(follower.timed.record.speedup, 3.0);
}

TEST(TurnGroupsTest, OtherCasesAndClosedGroupsAreNotJoined) {
  auto groups = TurnGroups::For("test-keys");
  TurnMember a, b, c;
  auto lead = groups->Join("case 1", &a, 8);
  ASSERT_TRUE(lead);
  EXPECT_TRUE(groups->Join("case 2", &b, 8));  // another case: its own group
  EXPECT_TRUE(lead->Close().empty());
  EXPECT_TRUE(groups->Join("case 1", &c, 8));  // closed: a new group
}

TEST(TurnGroupsTest, AFullGroupSendsTheNextToANewOne) {
  auto groups = TurnGroups::For("test-full");
  TurnMember a, b, c;
  auto lead = groups->Join("case", &a, 2);
  ASSERT_TRUE(lead);
  auto followed = std::async(std::launch::async, [&] { return groups->Join("case", &b, 2).has_value(); });
  AwaitMembers(*lead, 2);
  auto second = groups->Join("case", &c, 2);  // the first is full
  ASSERT_TRUE(second);
  EXPECT_EQ(lead->Close().size(), 1u);
  lead->Finish();
  EXPECT_FALSE(followed.get());
  EXPECT_EQ(second->members(), 1);
}

TEST(TurnGroupsTest, GroupsOfOneAreNeverJoined) {
  auto groups = TurnGroups::For("test-one");
  TurnMember a, b;
  auto first = groups->Join("case", &a, 1);
  auto second = groups->Join("case", &b, 1);
  EXPECT_TRUE(first && second);
}

// A leader that fails before it has the device (its lock timed out) never closes its
// group: the followers join again, and one of them leads.
TEST(TurnGroupsTest, FollowersOfALeaderThatNeverHadTheDeviceTryAgain) {
  auto groups = TurnGroups::For("test-orphan");
  TurnMember leader, follower;
  std::optional<TurnGroups::Lead> lead = groups->Join("case", &leader, 8);
  ASSERT_TRUE(lead);
  auto followed = std::async(std::launch::async, [&] {
    auto again = groups->Join("case", &follower, 8);
    return again.has_value();  // its Lead ends here
  });
  AwaitMembers(*lead, 2);
  lead.reset();  // gone without Close
  EXPECT_TRUE(followed.get());
}

}  // namespace
}  // namespace kvault
