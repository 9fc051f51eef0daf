#pragma once
// The dataset card of `kvault corpus export --format hf` (docs/corpus.md, "Export"):
// README.md (the Hugging Face card metadata, then what the folder holds, where it came
// from and what was left out) and LICENSE.md (the licence of each source).
//
//   CardLicence l = CardLicenceOf(licences);  // l.license "mit", or "other" + l.name
//   WriteFileAtomic(dir + "/README.md", DatasetCard(stats, options, summary, licences));
//   WriteFileAtomic(dir + "/LICENSE.md", LicenceFile(licences));
//
// Pure; thread-safe.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "corpus/export.h"
#include "corpus/stats.h"

namespace kvault::corpus {

// The rows of an export by (source, licence) as the vault states them ("" unstated).
using SourceLicences = std::map<std::pair<std::string, std::string>, int64_t>;

// The card's licence metadata. Every row with one stated licence the Hub lists: that
// id (`mit`). No row with a stated licence: `unknown`. Otherwise (several licences,
// some rows without one, or one licence the Hub does not list): `other`, with
// `license_name` (`name`) and `license_link: LICENSE.md`, as the Hub requires.
struct CardLicence {
  std::string license;   // the Hub's id, "unknown" or "other"
  std::string name;      // for "other": "per-source" for a mix, else the licence as an id
  int64_t unstated = 0;  // rows whose source states no licence (LicenceStated)
};
CardLicence CardLicenceOf(const SourceLicences& licences);

// The Hub's id of a licence: an SPDX id the Hub lists, in lower case ("MIT" -> "mit",
// "GPL-3.0-only" -> "gpl-3.0"); "" for one it does not list.
std::string HubLicenceId(const std::string& license);

std::string DatasetCard(const CorpusStats& stats, const ExportOptions& options, const ExportSummary& summary,
                        const SourceLicences& licences);
// LICENSE.md: each source's licence and its rows, and what an unstated one means.
std::string LicenceFile(const SourceLicences& licences);

}  // namespace kvault::corpus
