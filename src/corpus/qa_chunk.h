#pragma once
// Chunks of library sources for QA mining (docs/corpus.md, "QA mining"): each chunk
// is a run of whole top-level blocks (a function, a class, a group of declarations)
// of one file, with its line range, at most ChunkOptions::max_lines long.
//
//   auto chunks = ChunkTree("rocBLAS/library/src", ChunkOptions{});
//   (*chunks)[0].file -> "blas1/rocblas_axpy.cpp", .first_line = 1, .last_line = 64
//
// Pure apart from reading files; thread-safe.
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kvault::corpus {

struct SourceChunk {
  std::string file;      // relative to the tree's root
  int first_line = 0;    // 1-based, inclusive
  int last_line = 0;
  std::string text;      // lines first_line..last_line, each ending in '\n'
  std::string language;  // cpp | c | hip | cuda | python
  std::string id;        // SHA-256 hex of file, range and text: the resume key
  // The lines a..b of the chunk (clamped to it), joined; "" when out of range.
  std::string Lines(int a, int b) const;
  std::string Citation() const;  // "file:first-last"
};

struct ChunkOptions {
  int max_lines = 80;   // longer blocks are cut at this many lines
  int min_lines = 8;    // shorter blocks are joined to the next while they fit
};

// The chunks of one file. Blocks end where the brace depth returns to zero at the end
// of a line (C-like languages), or before the next line at indent 0 that is not blank
// or a comment (Python).
std::vector<SourceChunk> ChunkSource(const std::string& file, std::string_view text,
                                     const std::string& language, const ChunkOptions& options);

// Every source file under `root` (.c .cc .cpp .cxx .h .hpp .hip .cu .cuh .py), sorted
// by path, chunked. Error when root is not a folder or a file cannot be read.
Result<std::vector<SourceChunk>> ChunkTree(const std::string& root, const ChunkOptions& options);

}  // namespace kvault::corpus
