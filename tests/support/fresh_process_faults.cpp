#include "support/fresh_process_faults.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/child_process.hpp"
#include "support/fault_run.hpp"
#include "support/gpu.hpp"
#include "support/process_memory.hpp"

namespace cush_test {

namespace {

namespace faults = cush::detail::faults;

constexpr const char* kCall = "CUSH_FRESH_FAULT";           // "count", or the number of the call to fail
constexpr const char* kReport = "CUSH_FRESH_FAULT_REPORT";  // the file the child reports in
constexpr auto kChildTimeLimit = std::chrono::minutes(5);

// How a run ended: "normally", or the type of what it threw.
std::string end_of(const fault_run::Outcome& o) { return o.type.empty() ? "normally" : o.type; }

// What a child reported, and how it exited.
struct ChildReport {
  bool passed = false;  // exited with 0: its own checks passed
  std::string exit;     // how it exited, in words
  std::string log;      // its output
  std::size_t calls = 0;
  std::string armed_end, clean_end;
  std::optional<std::string> failed;                    // the site made to fail, if reached
  std::vector<std::pair<std::size_t, std::string>> sites;  // counting: (first call, site)
  std::vector<std::size_t> free;                        // free memory per GPU, unless under a tool
};


// The last lines of a log, for a failure message.
std::string tail(const std::string& log, std::size_t lines = 40) {
  std::size_t at = log.size();
  for (std::size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = log.rfind('\n', at - 1);
  return at == std::string::npos || at == 0 ? log : log.substr(at + 1);
}

void parse_report(const std::string& text, ChildReport& r) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string key = line.substr(0, tab), value = line.substr(tab + 1);
    if (key == "calls") r.calls = std::stoull(value);
    else if (key == "armed_end") r.armed_end = value;
    else if (key == "clean_end") r.clean_end = value;
    else if (key == "failed") r.failed = value;
    else if (key == "site") {
      const std::size_t t = value.find('\t');
      r.sites.emplace_back(std::stoull(value.substr(0, t)), value.substr(t + 1));
    } else if (key == "free") {
      std::istringstream bytes(value);
      for (std::size_t b = 0; bytes >> b;) r.free.push_back(b);
    }
  }
}

// This executable running only `child_test` with `call` ("count" or a number).
struct Child {
  std::string call, report;
  std::unique_ptr<ChildProcess> process;
  Child(const std::string& child_test, std::string call_, const std::filesystem::path& dir)
      : call(std::move(call_)), report((dir / ("report-" + call + ".txt")).string()) {
    process = std::make_unique<ChildProcess>(
        child_test, std::vector<std::string>{std::string(kCall) + "=" + call, std::string(kReport) + "=" + report},
        (dir / ("log-" + call + ".txt")).string());
  }
  // Waits for it (killing it after kChildTimeLimit) and reads its report.
  ChildReport finish() {
    ChildReport r;
    (void)process->wait(kChildTimeLimit);
    r.log = process->output();
    r.exit = process->ending();
    r.passed = process->passed();
    parse_report(read_file(report), r);
    return r;
  }
};

ChildReport run_child(const std::string& child_test, const std::string& call, const std::filesystem::path& dir) {
  return Child(child_test, call, dir).finish();
}

// Children run side by side: each compares its own memory with the counting child's, which
// only CUSH_TEST_MEMORY=process keeps apart from the other children's; under a CUDA tool no child
// compares memory (the tool's leak check stands in), and one at a time under memcheck took over
// 1,000 s on 2 x H200 (CUSH_FRESH_JOBS sets how many; default 4 then, else 1).
std::size_t side_by_side() {
  if (const char* jobs = std::getenv("CUSH_FRESH_JOBS"); jobs != nullptr && *jobs != '\0')
    return std::max<std::size_t>(1, std::stoull(jobs));
  return process_memory_mode() || under_cuda_tool() ? 4 : 1;
}

}  // namespace

bool is_fresh_process_child() {
  const char* call = std::getenv(kCall);
  return call != nullptr && *call != '\0';
}

void run_fresh_process_child(const std::function<void()>& scenario) {
  const std::string call = std::getenv(kCall);
  const char* report_path = std::getenv(kReport);
  ASSERT_TRUE(report_path != nullptr && *report_path != '\0') << kReport << " is not set";
  std::optional<std::size_t> k;
  if (call != "count") k = std::stoull(call);

  const fault_run::Outcome armed = fault_run::fail_once(scenario, k);
  const std::optional<faults::Site>& failed = armed.record.failed;
  if (failed) {
    const std::string site = failed->str();
    EXPECT_TRUE(armed.problem.empty()) << "call " << call << ", " << site << ": " << armed.problem;
    if (!armed.message) {
      if (armed.problem.empty()) ADD_FAILURE() << "call " << call << ", " << site << " failed, and the run did not throw";
    } else {
      EXPECT_NE(armed.message->find(fault_run::function_of(failed->call)), std::string::npos)
          << "call " << call << ", " << site << ": the error does not name the call: " << *armed.message;
    }
    fault_run::add_covered({*failed});
  } else {
    EXPECT_TRUE(armed.problem.empty()) << "call " << call << " (not reached): " << armed.problem;
  }

  // Again without faults: it must end as the counting run did (the parent compares).
  const fault_run::Outcome clean = fault_run::fail_once(scenario, std::nullopt);
  EXPECT_TRUE(clean.problem.empty()) << "after call " << call << " failed, a run without faults: " << clean.problem;

  std::FILE* f = std::fopen(report_path, "w");
  ASSERT_NE(f, nullptr) << "cannot write " << report_path;
  std::fprintf(f, "calls\t%zu\narmed_end\t%s\nclean_end\t%s\n", armed.record.calls, end_of(armed).c_str(),
               end_of(clean).c_str());
  if (failed) std::fprintf(f, "failed\t%s\n", failed->str().c_str());
  if (!k)
    for (const auto& [site, first] : armed.record.sites) std::fprintf(f, "site\t%zu\t%s\n", first, site.str().c_str());
  if (!under_cuda_tool()) {
    std::fprintf(f, "free\t");
    for (std::size_t bytes : gpu_free_memory()) std::fprintf(f, " %zu", bytes);
    std::fprintf(f, "\n");
  }
  std::fclose(f);
}

FaultWalk walk_in_fresh_processes(const std::string& name, const std::string& child_test) {
  FaultWalk walk;
  std::string dir_template = (std::filesystem::temp_directory_path() / "cush-fresh-XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    ADD_FAILURE() << name << ": cannot make a folder for the children's reports";
    return walk;
  }
  const std::filesystem::path dir = dir_template;
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  const ChildReport counting = run_child(child_test, "count", dir);
  if (!counting.passed || counting.calls == 0) {
    ADD_FAILURE() << name << ": the counting child " << counting.exit << " after " << counting.calls
                  << " checked calls:\n" << tail(counting.log);
    std::filesystem::remove_all(dir);
    return walk;
  }
  walk.calls = counting.calls;
  std::vector<std::pair<std::size_t, std::string>> firsts = counting.sites;
  std::sort(firsts.begin(), firsts.end());

  // Every site's child, `jobs` at a time; checked in order below.
  const std::size_t jobs = side_by_side();
  std::vector<ChildReport> reports;
  for (std::size_t i = 0; i < firsts.size(); i += jobs) {
    std::vector<Child> batch;
    for (std::size_t j = i; j < std::min(firsts.size(), i + jobs); ++j)
      batch.emplace_back(child_test, std::to_string(firsts[j].first), dir);
    for (Child& c : batch) reports.push_back(c.finish());
    const std::size_t ended = reports.size();
    if (ended / 10 != (ended - batch.size()) / 10 && ended < firsts.size())
      std::printf("[ faults   ] %s: %zu of %zu fresh processes, %zu side by side (%.0f s)\n", name.c_str(), ended,
                  firsts.size(), jobs, seconds());
  }

  std::set<std::string> failed_sites;
  std::size_t elsewhere = 0, not_reached = 0;
  for (std::size_t i = 0; i < firsts.size(); ++i) {
    const auto& [first, site] = firsts[i];
    const std::string at = name + ", call " + std::to_string(first) + " (" + site + ")";
    const ChildReport& r = reports[i];
    if (!r.passed) ADD_FAILURE() << at << ": the child " << r.exit << ":\n" << tail(r.log);
    if (!r.failed) {
      // The run took another path (a stream found idle or busy) and made fewer calls.
      ++not_reached;
      if (r.armed_end != counting.clean_end)
        ADD_FAILURE() << at << ": not reached, yet the run ended " << r.armed_end << ", the counting run "
                      << counting.clean_end;
    } else {
      failed_sites.insert(*r.failed);
      if (*r.failed != site) ++elsewhere;
    }
    if (r.clean_end != counting.clean_end)
      ADD_FAILURE() << at << ": after the failure a run without faults ended " << r.clean_end
                    << ", the counting run " << counting.clean_end << " (a process-wide state left broken?)";
    if (r.free.size() == counting.free.size()) {
      for (std::size_t d = 0; d < r.free.size(); ++d)
        if (r.free[d] != counting.free[d])
          ADD_FAILURE() << at << ": GPU " << d << " has "
                        << static_cast<long long>(counting.free[d]) - static_cast<long long>(r.free[d])
                        << " bytes less free than after the counting run";
    } else {
      ADD_FAILURE() << at << ": the child measured free memory on " << r.free.size() << " GPUs, the counting child on "
                    << counting.free.size();
    }
    if (::testing::Test::HasFatalFailure()) break;
  }
  std::filesystem::remove_all(dir);
  walk.sites = failed_sites.size();
  if (not_reached + elsewhere > 0)
    std::printf("[ faults   ] %s: %zu first calls were not reached and %zu reached another site in their run "
                "(another path)\n",
                name.c_str(), not_reached, elsewhere);
  std::printf("[ faults   ] %s: %zu sites failed at their first call, each in a fresh process (%zu checked calls "
              "in a run; %.0f s)\n",
              name.c_str(), walk.sites, walk.calls, seconds());
  return walk;
}

}  // namespace cush_test
