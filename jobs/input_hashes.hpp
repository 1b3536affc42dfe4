// Content hashes of a job's input files, computed once and remembered: within a process
// by path, and across runs in OUTPUT/input-hashes/ (one small file per input path), so
// a rerun does not read an unchanged scene again just to learn that it is unchanged.
//
// A remembered hash is used only while the file's identity is the one it was hashed
// with: device, inode, size, modification and status-change times (ns). Any write to the
// file, a rename over it or a copy onto its path changes one of them (the status-change
// time cannot be set back by a user), so a changed input is hashed again. A hash is
// remembered across runs only when the file was not changed while it was read and its
// status-change time is at least 2 s old: a change in the same clock tick (or second,
// on file systems with coarse times) as the hashing could otherwise keep the same times.
#pragma once

#include <future>
#include <optional>
#include <string>

#include <memory>

#include "io/file_image.hpp"
#include "src/base/error.hpp"

namespace hb::jobs {

// The folder for the hashes kept across runs (a job's output folder/input-hashes);
// empty: remember within this process only.
void remember_hashes_in(const std::string& folder);

// 64-bit FNV-1a over the file's 8-byte words in 64 MiB pieces (hashed in parallel),
// the pieces' hashes folded in order with the file's length, as 16 hex digits;
// nullopt when the file cannot be read. Logs (debug) whether it read the file. A file
// being loaded by load_and_hash is waited for and not read again.
std::optional<std::string> file_content_hash(const std::string& path);

// Loads the file through `sink` for the step that reads it next (io::load_file_image),
// its hash taken from the load's own reads while they are in cache, unless the hash is
// known already. Returns the load's outcome.
std::shared_future<Status> load_and_hash(const std::string& path, std::shared_ptr<io::ImageSink> sink);

}  // namespace hb::jobs
