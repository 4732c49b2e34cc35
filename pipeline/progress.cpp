#include "pipeline/progress.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>

namespace gpuprobe::pipeline {

namespace {

// "[3/16] name ..." or "[2/7+] name ...": the step's k, n, whether n is final, and its name.
struct step_line {
  int k = 0, n = 0;
  bool final_count = true;
  std::string text; // "[3/16] name"
};
std::optional<step_line> parse_step(const std::string &l) {
  static const std::regex re(R"(^\[(\d+)/(\d+)(\+?)\]\s+(\S+))");
  std::smatch m;
  if (!std::regex_search(l, m, re))
    return std::nullopt;
  step_line s;
  s.k = std::atoi(m[1].str().c_str());
  s.n = std::atoi(m[2].str().c_str());
  s.final_count = m[3].str().empty();
  s.text = "[" + m[1].str() + "/" + m[2].str() + m[3].str() + "] " + m[4].str();
  return s;
}

// "[tlb] stride 4 MiB (2/8): 64 points, 0.7 s elapsed": the sweep's words before the colon, its
// k of n, and the seconds it states (when it does).
struct sweep_line {
  std::string text;
  int k = 0, n = 0;
  std::optional<double> elapsed;
};
std::optional<sweep_line> parse_sweep(const std::string &l) {
  static const std::regex tag(R"(^\[[a-z][a-z_-]*\]\s+)");
  static const std::regex kn(R"((\d+)/(\d+))");
  static const std::regex secs(R"(([0-9.]+) s elapsed)");
  std::smatch m;
  if (!std::regex_search(l, m, tag))
    return std::nullopt;
  std::string rest = m.suffix().str();
  const std::string head = rest.substr(0, rest.find(':'));
  std::smatch k;
  if (!std::regex_search(head, k, kn))
    return std::nullopt;
  sweep_line s;
  s.text = head;
  s.k = std::atoi(k[1].str().c_str());
  s.n = std::atoi(k[2].str().c_str());
  if (s.k <= 0 || s.n < s.k)
    return std::nullopt;
  if (std::smatch e; std::regex_search(rest, e, secs))
    s.elapsed = std::atof(e[1].str().c_str());
  return s;
}

} // namespace

void stage_watch::feed(const std::string &chunk, double now_s) {
  if (log_) {
    std::fwrite(chunk.data(), 1, chunk.size(), log_);
    std::fflush(log_);
  }
  partial_ += chunk;
  std::size_t at;
  while ((at = partial_.find('\n')) != std::string::npos) {
    line(partial_.substr(0, at), now_s);
    partial_.erase(0, at + 1);
  }
  // A step announced before its line ends (validate prints the result after measuring).
  if (const auto s = parse_step(partial_))
    enter_step(s->text, s->k, s->final_count ? s->n : 0, now_s);
}

void stage_watch::enter_step(const std::string &text, int k, int n, double now_s) {
  if (text == step_)
    return;
  if (k == 1 || step_.empty())
    step_at_ = now_s; // the first step of a count: the count's clock starts
  step_ = text;
  step_k_ = k;
  step_n_ = n;
  sweep_.clear();
  sweep_left_.reset();
}

void stage_watch::line(const std::string &l, double now_s) {
  tail_.push_back(l);
  if (tail_.size() > 30)
    tail_.pop_front();
  if (l.rfind("gpuprobe ", 0) == 0 && l.find(": ") != std::string::npos &&
      l.find(" -> ") != std::string::npos)
    summary_ = l;
  const auto trimmed = l.substr(std::min(l.find_first_not_of(' '), l.size()));
  if ((l.find("other process") != std::string::npos || l.find("DISTURBED") != std::string::npos) &&
      notes_.size() < 5 && std::find(notes_.begin(), notes_.end(), trimmed) == notes_.end())
    notes_.push_back(trimmed);
  if (l.find("waiting up to") != std::string::npos) { // the busy guard: say it while it waits
    sweep_ = trimmed;
    sweep_left_.reset();
    return;
  }
  if (const auto s = parse_step(l)) {
    enter_step(s->text, s->k, s->final_count ? s->n : 0, now_s);
    return;
  }
  if (const auto s = parse_sweep(l)) {
    sweep_ = s->text;
    if (s->elapsed && s->k < s->n)
      sweep_left_ = *s->elapsed * (s->n - s->k) / s->k;
    else if (s->k == s->n)
      sweep_left_ = 0.0;
    else
      sweep_left_.reset();
  }
}

std::string stage_watch::status(const std::string &stage, double now_s, std::size_t width) const {
  char head[64];
  std::snprintf(head, sizeof head, "[run] %-12s %4.0f s", stage.c_str(), now_s);
  std::string s = head;
  if (!step_.empty())
    s += "  " + step_;
  if (!sweep_.empty())
    s += "  " + sweep_;
  std::optional<double> left = sweep_left_;
  // A step of a final count ("[3/16]", not "[2/7+]"): the steps so far at their mean pace.
  if (!left && step_n_ > 0 && step_k_ > 1 && step_n_ >= step_k_ && now_s > step_at_)
    left = (now_s - step_at_) / (step_k_ - 1) * (step_n_ - step_k_ + 1);
  if (left) {
    char t[32];
    std::snprintf(t, sizeof t, ", ~%.0f s left", *left);
    s += t;
  }
  if (s.size() > width)
    s = s.substr(0, width > 3 ? width - 3 : 0) + "...";
  return s;
}

} // namespace gpuprobe::pipeline
