#pragma once
// Group turns (docs/timing.md, "Group turns"): candidates of the same performance case
// that wait for the device's turn at the same time share one turn. The first to wait
// opens a group and leads it; lanes of this process that arrive for the same case
// while it still waits for the device join it (at most TimingSettings::group_max in
// all). When the leader has the device to itself it closes the group and times the
// reference once, interleaved with every member's candidate (TimeTurn); the members'
// threads wait meanwhile, their sessions lent to the leader, and go on with their own
// re-check once the leader hands their records back. A GRPO group (8 samples of one
// prompt) thus pays one drain, one reference warm-up and one reference series instead
// of eight.
//
//   TurnMember me{&session, &request, std::move(prepared)};
//   if (auto lead = groups->Join(key, &me, max)) {       // this lane leads
//     TimeTurn(me, [&] { return lead->Close(); });        // the followers, once the turn is had
//     lead->Finish();                                      // their records are final: they go on
//   }                                                      // else a leader timed me
//   RecheckCase(me);
//
// One registry per device per process, like DeviceGate (other processes time on the
// device too, but their candidates never share a turn). Thread-safe.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/timed_case.h"

namespace kvault {

class TurnGroups {
 public:
  static std::shared_ptr<TurnGroups> For(const std::string& device);

  struct Group;

  // The lead of an open group; Finish (or the destructor) ends it.
  class Lead {
   public:
    Lead(Lead&& o) noexcept : groups_(o.groups_), group_(std::move(o.group_)) {}
    Lead& operator=(Lead&&) = delete;
    Lead(const Lead&) = delete;
    ~Lead() { Finish(); }
    // Closes the group: nobody joins it any more. Its other members, in the order
    // they joined; their sessions are the leader's until Finish.
    std::vector<TurnMember*> Close();
    // The members so far, the leader included.
    int members() const;
    // The followers' records are final: they go on. A group never closed sends its
    // followers back to join again (its leader failed before it had the device).
    void Finish();

   private:
    friend class TurnGroups;
    Lead(TurnGroups* groups, std::shared_ptr<Group> group) : groups_(groups), group_(std::move(group)) {}
    TurnGroups* groups_;
    std::shared_ptr<Group> group_;
  };

  // `member` joins the open group of `key` when one has room, and returns nullopt
  // once its leader has timed it (member->timed holds its record or failure); else it
  // opens a group of at most `max_members` and returns its Lead at once.
  std::optional<Lead> Join(const std::string& key, TurnMember* member, int max_members);

 private:
  TurnGroups() = default;
  // Nobody joins `group` any more (it is no longer the open one of its key). mutex_ held.
  void Unlist(const std::shared_ptr<Group>& group);
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Group>> open_;  // by key: groups still waiting for the device
};

}  // namespace kvault
