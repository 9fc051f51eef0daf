#include "engine/turn_group.h"

#include <algorithm>

namespace kvault {

struct TurnGroups::Group {
  std::string key;
  int max_members = 1;
  std::vector<TurnMember*> followers;
  bool closed = false;  // the leader has the device: nobody joins
  bool ended = false;   // the followers may go: timed (closed) or sent back (not closed)
};

std::shared_ptr<TurnGroups> TurnGroups::For(const std::string& device) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<TurnGroups>> registries;
  std::lock_guard lock(mutex);
  auto& g = registries[device];
  if (!g) g.reset(new TurnGroups());
  return g;
}

std::optional<TurnGroups::Lead> TurnGroups::Join(const std::string& key, TurnMember* member, int max_members) {
  std::unique_lock lock(mutex_);
  for (;;) {
    auto it = open_.find(key);
    const bool room = it != open_.end() && static_cast<int>(it->second->followers.size()) + 1 < it->second->max_members;
    if (!room) {
      auto group = std::make_shared<Group>();
      group->key = key;
      group->max_members = std::max(1, max_members);
      // A full group waits for the device unseen: the next arrivals join this one.
      if (group->max_members > 1) open_[key] = group;
      return Lead(this, std::move(group));
    }
    std::shared_ptr<Group> group = it->second;
    group->followers.push_back(member);
    changed_.wait(lock, [&] { return group->ended; });
    if (group->closed) return std::nullopt;  // timed by the leader
    // The leader failed before it had the device: try again (one of us leads).
  }
}

void TurnGroups::Unlist(const std::shared_ptr<Group>& group) {
  auto it = open_.find(group->key);
  if (it != open_.end() && it->second == group) open_.erase(it);
}

std::vector<TurnMember*> TurnGroups::Lead::Close() {
  std::lock_guard lock(groups_->mutex_);
  group_->closed = true;
  groups_->Unlist(group_);
  return group_->followers;
}

int TurnGroups::Lead::members() const {
  std::lock_guard lock(groups_->mutex_);
  return group_ ? 1 + static_cast<int>(group_->followers.size()) : 0;
}

void TurnGroups::Lead::Finish() {
  if (!group_) return;
  {
    std::lock_guard lock(groups_->mutex_);
    groups_->Unlist(group_);
    group_->ended = true;
  }
  groups_->changed_.notify_all();
  group_.reset();
}

}  // namespace kvault
