// Every link and image of the Markdown pages a user reads points at a file of the tree. The rule
// that finds a page's links (local_links) is checked first on seeded, generated pages whose links
// are known, with code spans, fenced blocks, web addresses and anchors mixed in.
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The local targets of `page`'s inline links and images ([text](target), ![alt](target "title")),
// without their #fragment; links inside code spans and fenced blocks, web addresses (a scheme
// such as https:) and anchors within the page are not local.
std::vector<std::string> local_links(const std::string &page) {
  std::vector<std::string> out;
  std::istringstream lines(page);
  std::string line;
  bool fenced = false;
  while (std::getline(lines, line)) {
    if (line.find("```") != std::string::npos && line.find_first_not_of(' ') == line.find("```")) {
      fenced = !fenced;
      continue;
    }
    if (fenced)
      continue;
    bool in_code = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '`') {
        in_code = !in_code;
        continue;
      }
      if (in_code || line.compare(i, 2, "](") != 0)
        continue;
      const std::size_t start = i + 2, end = line.find(')', start);
      if (end == std::string::npos)
        break;
      std::string target = line.substr(start, end - start);
      target = target.substr(0, target.find(' ')); // a title follows a space
      i = end;
      const auto colon = target.find(':'), slash = target.find('/');
      if (target.empty() || target[0] == '#' ||
          (colon != std::string::npos && (slash == std::string::npos || colon < slash)))
        continue; // an anchor, or an address with a scheme
      out.push_back(target.substr(0, target.find('#')));
    }
  }
  return out;
}

TEST(DocsLinks, TheLinkRuleFindsExactlyTheLocalLinksOfGeneratedPages) {
  std::mt19937 rng(2026);
  int pages = 0, links = 0, decoys = 0;
  for (int n = 0; n < 300; ++n, ++pages) {
    std::string page;
    std::vector<std::string> want;
    const int parts = 1 + int(rng() % 12);
    for (int k = 0; k < parts; ++k) {
      const std::string path =
          std::string(rng() % 2 ? "../" : "") + "dir" + std::to_string(rng() % 9) + "/f.md";
      switch (rng() % 9) {
      case 0: // a link
        page += "see [the page](" + path + ") here ";
        want.push_back(path);
        break;
      case 1: // an image with a title
        page += "![a figure](" + path + " \"its title\") ";
        want.push_back(path);
        break;
      case 2: // a link with a fragment
        page += "[part](" + path + "#a-heading), ";
        want.push_back(path);
        break;
      case 3: // inside a code span: text, not a link
        page += "`[x](" + path + ")` ";
        ++decoys;
        break;
      case 4: // inside a fenced block
        page += "\n```\n[x](" + path + ")\n```\n";
        ++decoys;
        break;
      case 5: // a web address
        page += "[site](https://example.org/" + path + ") ";
        ++decoys;
        break;
      case 6: // an anchor on the page
        page += "[below](#section-" + std::to_string(k) + ") ";
        ++decoys;
        break;
      case 7:
        page += "\n";
        break;
      default:
        page += "words (in parentheses) and ] brackets ";
      }
    }
    links += int(want.size());
    EXPECT_EQ(local_links(page), want) << page;
  }
  EXPECT_GE(links, 500);
  EXPECT_GE(decoys, 500);
}

// The pages of the tree (the READMEs and docs/; the golden reports are tool output whose figures
// are drawn beside them, and build folders are not the tree).
std::vector<fs::path> markdown_pages() {
  std::vector<fs::path> out;
  const fs::path root = GPUPROBE_SOURCE_DIR;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name[0] == '.' || name.rfind("build", 0) == 0 || name == "_deps" ||
                               it->path() == root / "tests/fixtures/golden")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".md")
      out.push_back(it->path());
  }
  return out;
}

TEST(DocsLinks, EveryLinkOfThePagesPointsAtAFileOfTheTree) {
  int pages = 0, links = 0;
  for (const auto &page : markdown_pages()) {
    std::ifstream in(page);
    std::stringstream text;
    text << in.rdbuf();
    for (const auto &target : local_links(text.str())) {
      ++links;
      EXPECT_TRUE(fs::exists(page.parent_path() / target))
          << fs::relative(page, GPUPROBE_SOURCE_DIR) << " links " << target;
    }
    ++pages;
  }
  EXPECT_GE(pages, 30);
  EXPECT_GE(links, 20);
}

} // namespace
