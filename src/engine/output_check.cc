#include "engine/output_check.h"

#include <filesystem>

#include "check/tensor_file.h"
#include "engine/worker_outcome.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

void RemoveFile(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

RunFault Fault(OutcomeStatus status, std::string message) {
  return RunFault{status, std::move(message)};
}

// The comparison on the device (the candidate's worker delivered into the offer).
ComparedOutputs CompareOnDevice(DeviceOffer& offer, const OutputFiles& files, const Tolerance& tolerance) {
  ComparedOutputs out;
  out.on_device = true;
  const int sets = static_cast<int>(files.candidate.size());
  auto got = offer.Compare(tolerance, files.device_stem, sets);
  if (!got) {
    out.failure = Fault(OutcomeStatus::kInfraError, "comparing on the device: " + got.error());
  } else if (!got->served) {
    out.failure = Fault(OutcomeStatus::kCrash,
                        "the candidate's worker reported outputs it never handed over (a forged reply)");
  } else {
    out.calls = std::move(got->calls);
  }
  return out;
}

// The comparison from files, in this process.
ComparedOutputs CompareFiles(const OutputFiles& files, const Tolerance& tolerance) {
  ComparedOutputs out;
  auto ref = TensorFile::Open(files.reference);
  if (!ref) {
    out.failure = Fault(OutcomeStatus::kInfraError, "reference output unreadable: " + ref.error());
    return out;
  }
  for (const std::string& path : files.candidate) {
    auto cand = TensorFile::Open(path, CandidateOutputLimit(ref->file_bytes()));
    if (!cand) {
      // Its worker said it wrote this file, atomically; candidate code runs in that
      // worker and can remove, replace or corrupt it: its doing, not the engine's.
      out.failure = Fault(OutcomeStatus::kCrash, "candidate output unreadable: " + cand.error());
      return out;
    }
    out.calls.push_back(Compare(*ref, *cand, tolerance));
    if (!out.calls.back().match) break;
  }
  return out;
}

}  // namespace

uint64_t CandidateOutputLimit(uint64_t reference_bytes) { return 2 * reference_bytes + (uint64_t{1} << 20); }

std::optional<RunFault> InputDigestVerdict(const std::string& reference_digest,
                                           const std::string& candidate_digest,
                                           const std::function<Result<std::string, TrustedFailure>()>& make_again) {
  if (candidate_digest == reference_digest) return std::nullopt;
  auto again = make_again();
  if (!again && ReferenceRanOutOfMemory(again.failure().status, again.error()))  // the memory's, not the inputs'
    return Fault(again.failure().status, "the candidate's worker reported other inputs than the reference's, and "
                                         "the reference ran out of device memory making them again to tell whose "
                                         "the difference is: " + again.error());
  if (!again && again.failure().status != OutcomeStatus::kTaskError)  // nothing learnt of the task
    return Fault(again.failure().status, "the candidate's worker reported other inputs than the reference's, "
                                         "and making them again failed: " + again.error());
  if (again && *again == reference_digest)
    return Fault(OutcomeStatus::kCrash,
                 "the candidate's worker reported inputs that differ from the "
                 "reference's, which the reference worker reproduces (a forged reply)");
  return Fault(OutcomeStatus::kTaskError,
               "task inputs are not a function of the seed (the reference's and the candidate's worker "
               "made different inputs" +
                   (again ? std::string(", and the reference worker others again)")
                          : "; making them again: " + again.error() + ")"));
}

ComparedOutputs CompareOutputs(DeviceOffer& offer, const Json& candidate_reply, const OutputFiles& files,
                               const Tolerance& tolerance, const std::function<void()>& device_done) {
  const bool delivered = offer.open() && ReplyString(candidate_reply, protocol::field::kHandoff, "") ==
                                             protocol::kHandoffDelivered;
  ComparedOutputs out;
  if (delivered) {
    out = CompareOnDevice(offer, files, tolerance);
    if (device_done) device_done();
  } else {
    std::optional<TrustedFailure> unwritten;
    if (offer.open()) unwritten = offer.WriteTo(files.reference);  // the candidate's worker wrote files
    if (device_done) device_done();
    if (!unwritten) {
      out = CompareFiles(files, tolerance);
    } else {
      out.failure = Fault(unwritten->status, unwritten->message);
    }
  }
  for (const std::string& path : files.candidate) RemoveFile(path);
  if (files.remove_reference) RemoveFile(files.reference);
  return out;
}

}  // namespace kvault
