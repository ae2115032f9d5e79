// The transport table: which transport each operation uses from which message size, its text
// form and its file round trip (pure host code).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cush/error.hpp"
#include "cush/transport.hpp"

using cush::Collective;
using cush::Transport;
using cush::TransportTable;

TEST(TransportTable, PicksTheLastStepAtOrBelowTheSize) {
  cush::TransportTable t;
  t.set(Collective::all_to_all, 0, Transport::peer);
  t.set(Collective::all_to_all, 1 << 20, Transport::nccl);
  t.set(Collective::all_to_all, 1 << 30, Transport::host_staging);
  EXPECT_EQ(t.pick(Collective::all_to_all, 0), Transport::peer);
  EXPECT_EQ(t.pick(Collective::all_to_all, (1 << 20) - 1), Transport::peer);
  EXPECT_EQ(t.pick(Collective::all_to_all, 1 << 20), Transport::nccl);
  EXPECT_EQ(t.pick(Collective::all_to_all, std::size_t{1} << 40), Transport::host_staging);
  t.set(Collective::all_to_all, 1 << 20, Transport::peer);  // replaces the step
  EXPECT_EQ(t.pick(Collective::all_to_all, 1 << 21), Transport::peer);
  EXPECT_EQ(t.steps(Collective::all_to_all).size(), 3U);
  EXPECT_THROW(t.set(Collective::copy, 0, Transport::automatic), cush::InvalidArgument);
}

TEST(TransportTable, DefaultsNameATransportForEveryOperation) {
  const cush::TransportTable d = cush::TransportTable::defaults();
  for (std::size_t c = 0; c < cush::collective_count; ++c)
    for (std::size_t bytes : {std::size_t{0}, std::size_t{4096}, std::size_t{1} << 30})
      EXPECT_NE(d.pick(static_cast<Collective>(c), bytes), Transport::automatic);
  // Small messages where every device sends go through the peer kernel, large ones over the
  // copy engines; reductions run on the peer kernel's own reductions until the copy engines
  // (with the combine kernel) are faster.
  for (Collective c : {Collective::all_to_all, Collective::all_gather, Collective::scatter}) {
    EXPECT_EQ(d.pick(c, 4096), Transport::peer_kernel) << cush::to_string(c);
    EXPECT_EQ(d.pick(c, (std::size_t{16} << 20) - 1), Transport::peer_kernel) << cush::to_string(c);
    EXPECT_EQ(d.pick(c, std::size_t{16} << 20), Transport::peer) << cush::to_string(c);
  }
  EXPECT_EQ(d.pick(Collective::reduce, 4096), Transport::peer);
  EXPECT_EQ(d.pick(Collective::reduce, std::size_t{256} << 10), Transport::peer_kernel);
  EXPECT_EQ(d.pick(Collective::reduce, std::size_t{1} << 20), Transport::peer_kernel);
  EXPECT_EQ(d.pick(Collective::reduce, std::size_t{64} << 20), Transport::peer_kernel);
  EXPECT_EQ(d.pick(Collective::reduce, std::size_t{1} << 40), Transport::peer_kernel);
  EXPECT_EQ(d.pick(Collective::all_reduce, 4096), Transport::peer_kernel);
  EXPECT_EQ(d.pick(Collective::all_reduce, (std::size_t{128} << 20) - 1), Transport::peer_kernel);
  EXPECT_EQ(d.pick(Collective::all_reduce, std::size_t{128} << 20), Transport::peer);
}

TEST(TransportTable, TextRoundTripsThroughAFile) {
  cush::TransportTable t = cush::TransportTable::defaults();
  t.set(Collective::broadcast, 12345, Transport::host_staging);
  EXPECT_EQ(cush::TransportTable::parse(t.to_text()), t);
  const std::string path = ::testing::TempDir() + "cush_transports.txt";
  t.save(path);
  EXPECT_EQ(cush::TransportTable::load(path), t);
  std::remove(path.c_str());
  EXPECT_THROW((void)cush::TransportTable::load(path), cush::InvalidArgument);
}

TEST(TransportTable, ParseNamesTheBadLine) {
  const auto message = [](const char* text) {
    try {
      (void)cush::TransportTable::parse(text);
    } catch (const cush::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("# comment\ncopy 0 peer\nshuffle 0 peer\n").find("line 3"), std::string::npos);
  EXPECT_NE(message("copy x peer").find("not a byte count"), std::string::npos);
  EXPECT_NE(message("copy 0 carrier-pigeon").find("line 1"), std::string::npos);
  // The table's names are the four transports: the message never offers automatic, which is a
  // choice among them, not a step.
  for (const char* text : {"copy 0 automatic", "copy 0 carrier-pigeon"}) {
    const std::string m = message(text);
    EXPECT_NE(m.find("is not a transport a table can name (peer, nccl, host_staging, peer_kernel)"), std::string::npos) << m;
    EXPECT_EQ(m.find("one of automatic"), std::string::npos) << m;
  }
  EXPECT_NE(message("copy 0 peer extra").find("expected"), std::string::npos);
  EXPECT_EQ(cush::TransportTable::parse("all_reduce 0 peer # comment\n\n").pick(Collective::all_reduce, 5), Transport::peer);
  EXPECT_EQ(cush::parse_transport("host_staging"), Transport::host_staging);
  EXPECT_EQ(cush::parse_transport("peer_kernel"), Transport::peer_kernel);
  EXPECT_STREQ(cush::to_string(Transport::peer_kernel), "peer_kernel");
  EXPECT_THROW((void)cush::parse_transport("kernel"), cush::InvalidArgument);
  EXPECT_STREQ(cush::to_string(Collective::all_to_all), "all_to_all");
}

// The guide's excerpt of defaults().to_text() is the table's: every line of it is a line of the
// table, and for every operation it names, it has all of that operation's lines (a step changed
// in the code and not in the guide fails here).
TEST(TransportTable, TheGuidesExcerptIsTheBuiltInTable) {
  std::ifstream in(CUSH_SOURCE_DIR "/docs/guide.md");
  ASSERT_TRUE(in) << "docs/guide.md not found";
  std::vector<std::string> excerpt;
  bool after_heading = false, inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("An excerpt of `defaults().to_text()`") != std::string::npos) after_heading = true;
    if (after_heading && !inside && line == "```text") {
      inside = true;
      continue;
    }
    if (inside && line == "```") break;
    if (inside && !line.empty() && line.front() != '#') excerpt.push_back(line);
  }
  ASSERT_FALSE(excerpt.empty()) << "no excerpt of defaults().to_text() in docs/guide.md";
  std::istringstream table(TransportTable::defaults().to_text());
  std::vector<std::string> lines;
  for (std::string line; std::getline(table, line);)
    if (!line.empty() && line.front() != '#') lines.push_back(line);
  std::set<std::string> operations;
  for (const std::string& line : excerpt) {
    EXPECT_NE(std::find(lines.begin(), lines.end(), line), lines.end()) << "the guide's line '" << line << "' is not in the table";
    operations.insert(line.substr(0, line.find(' ')));
  }
  for (const std::string& line : lines)
    if (operations.count(line.substr(0, line.find(' '))) != 0)
      EXPECT_NE(std::find(excerpt.begin(), excerpt.end(), line), excerpt.end()) << "the guide lacks the table's line '" << line << "'";
}
