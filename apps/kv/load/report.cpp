#include "report.hpp"

#include <cmath>

namespace ferrite::kv::load {

namespace {

double microseconds(double nanoseconds) { return std::round(nanoseconds) / 1000.0; }

}  // namespace

nlohmann::ordered_json latency_summary(const histogram& h) {
  auto at = [&](double q) { return microseconds(static_cast<double>(h.value_at(q))); };
  return {{"p50", at(0.50)}, {"p90", at(0.90)}, {"p99", at(0.99)}, {"p999", at(0.999)},
          {"max", microseconds(static_cast<double>(h.max()))}, {"mean", microseconds(h.mean())}};
}

nlohmann::ordered_json make_report(const load_options& options, const tally& total, double prefill_seconds,
                           double measured_seconds) {
  const std::uint64_t ops = total.gets + total.sets;
  nlohmann::ordered_json report = {
      {"server", options.host + ":" + std::to_string(options.port)},
      {"threads", options.threads},
      {"connections", options.threads * options.connections},
      {"depth", options.depth},
      {"keys", options.keys},
      {"zipf", options.zipf},
      {"value_bytes", options.value_bytes},
      {"get_ratio", options.get_ratio},
      {"warmup_seconds", options.warmup_seconds},
      {"seconds", measured_seconds},
      {"prefill_seconds", prefill_seconds},
      {"prefill_sets", total.prefill_sets},
      {"ops", ops},
      {"ops_per_second", measured_seconds > 0 ? static_cast<double>(ops) / measured_seconds : 0.0},
      {"gets", total.gets},
      {"sets", total.sets},
      {"hits", total.hits},
      {"misses", total.misses},
      {"errors", total.errors},
      {"connections_lost", total.connections_lost},
      {"latency_us", latency_summary(total.latency)},
      {"get_latency_us", latency_summary(total.get_latency)},
      {"set_latency_us", latency_summary(total.set_latency)},
      {"error_samples", total.error_samples},
  };
  return report;
}

}  // namespace ferrite::kv::load
