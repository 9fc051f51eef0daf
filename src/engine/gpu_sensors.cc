#include "engine/gpu_sensors.h"

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>

#include "util/subprocess.h"

namespace kvault {
namespace {

Json NumberOrNull(const std::string& field) {
  size_t b = field.find_first_not_of(" \t\r\n"), e = field.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return nullptr;
  const std::string text = field.substr(b, e - b + 1);
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return nullptr;
  return x;
}

}  // namespace

Json ParseNvidiaSmiSensors(const std::string& line) {
  std::stringstream in(line);
  std::string sm, mem, temp, extra;
  if (!std::getline(in, sm, ',') || !std::getline(in, mem, ',') || !std::getline(in, temp, ',') ||
      std::getline(in, extra, ','))
    return nullptr;
  Json out{{"source", "nvidia-smi"}, {"sm_mhz", NumberOrNull(sm)}, {"mem_mhz", NumberOrNull(mem)},
           {"temperature_c", NumberOrNull(temp)}};
  if (out["sm_mhz"].is_null() && out["mem_mhz"].is_null() && out["temperature_c"].is_null()) return nullptr;
  return out;
}

Json QuerySensorsWithTool(Backend backend, int device_index) {
  CommandSpec cmd;
  if (backend == Backend::kCuda) {
    cmd.argv = {"nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu",
                "--format=csv,noheader,nounits", "-i", std::to_string(device_index)};
  } else if (backend == Backend::kHip) {
    cmd.argv = {"rocm-smi", "-d", std::to_string(device_index), "--showclocks", "--showtemp", "--json"};
  } else {
    return nullptr;
  }
  auto r = RunCommand(cmd, std::chrono::seconds(10), 64 * 1024);
  if (!r || r->timed_out || r->exit_code != 0) return nullptr;
  if (backend == Backend::kCuda) return ParseNvidiaSmiSensors(r->output.substr(0, r->output.find('\n')));
  // rocm-smi's JSON names vary between versions: keep it whole, bounded.
  auto parsed = Json::parse(r->output, nullptr, false);
  if (parsed.is_discarded()) return nullptr;
  return Json{{"source", "rocm-smi"}, {"raw", parsed}};
}

}  // namespace kvault
