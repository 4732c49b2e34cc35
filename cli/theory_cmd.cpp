// gpuprobe theory: the RW paper's TAS/WAS models for given T, A, N (one JSON object on stdout).
#include "analysis/models.hpp"
#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"

#include <cmath>
#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

struct theory_options {
  std::string model;
  double pages = 0, free_pages = 0, threads = 0;
  int word_bits = 32;
  double clusters = 0;
};

void run_theory(const theory_options &o) {
  analysis::check_model_args(o.model, o.pages, o.free_pages, o.threads);
  json j = {{"model", o.model}, {"pages", o.pages}, {"free", o.free_pages}, {"threads", o.threads}};
  if (o.model == "queue") {
    j["tas"] = analysis::queue_tas(o.threads);
    j["was"] = analysis::queue_was(o.threads);
    j["equations"] = "Eq. 1 (TAS), Eq. 2 exact (WAS)";
  } else if (o.model == "rw") {
    j["tas"] = analysis::rw_tas(o.pages, o.free_pages, o.threads);
    j["was"] = analysis::rw_was_bound(o.pages, o.free_pages, o.threads);
    j["was_is_upper_bound"] = true;
    j["equations"] = "Eq. 3 exact (TAS), Eq. 4 (WAS bound)";
  } else if (o.model == "rw-bm") {
    if (o.word_bits != 32 && o.word_bits != 64)
      throw error("theory: --word-bits must be 32 or 64");
    j["word_bits"] = o.word_bits;
    j["tas"] = analysis::rw_bm_tas(o.pages, o.free_pages, o.threads, o.word_bits);
    j["was"] = analysis::rw_bm_was_bound(o.pages, o.free_pages, o.threads, o.word_bits);
    j["was_is_upper_bound"] = true;
    j["equations"] = "Eq. 5 (TAS), Eq. 6 (WAS bound)";
  } else if (o.model == "crw") {
    if (!(o.clusters >= 1) || o.clusters != std::floor(o.clusters))
      throw error("theory: model crw needs --clusters M, a whole number >= 1 (free-page "
                  "clusters)");
    if (o.clusters > o.free_pages)
      throw error("theory: --clusters (" + std::to_string((long long)o.clusters) +
                  ") exceeds --free: a cluster holds at least one free page");
    j["clusters"] = o.clusters;
    j["tas"] = analysis::crw_tas(o.pages, o.free_pages, o.threads, o.clusters);
    j["equations"] = "Eq. 9 with the exact RW TAS";
  } else {
    throw error("theory: unknown --model '" + o.model + "' (queue, rw, rw-bm, crw)");
  }
  // A model that cannot be evaluated here says so: never a null (NaN) or an overflow as a result.
  for (const char *k : {"tas", "was"})
    if (j.contains(k) && !(j[k].is_number() && std::isfinite(j[k].get<double>())))
      throw error("theory: " + o.model + "'s " + k + " is not a finite number at --pages " +
                  j["pages"].dump() + " --free " + j["free"].dump() + " --threads " +
                  j["threads"].dump() + " (the model cannot be evaluated there)");
  std::printf("%s\n", j.dump().c_str());
}

} // namespace

void setup_theory(CLI::App &parent) {
  auto opt = std::make_shared<theory_options>();
  auto *app = parent.add_subcommand("theory", "TAS/WAS of the RW paper's models (JSON on stdout)");
  app->footer("Example: gpuprobe theory --model rw-bm --pages 1048576 --free 10486 --threads 5000 "
              "--word-bits 64");
  app->add_option("--model", opt->model, "queue | rw | rw-bm | crw")->required();
  app->add_option("--pages", opt->pages, "T: pages in the pool")->required();
  app->add_option("--free", opt->free_pages, "A: free pages")->required();
  app->add_option("--threads", opt->threads, "N: concurrent threads")->required();
  app->add_option("--word-bits", opt->word_bits, "w for rw-bm: 32 or 64")->capture_default_str();
  app->add_option("--clusters", opt->clusters, "M for crw: free-page clusters");
  app->callback([opt] { run_theory(*opt); });
}

} // namespace gpuprobe::cli
