// No function of the sources is over 80 lines (docs/layout.md). The rule's scanner reads C++ and
// CUDA text without a compiler: comments, string and character literals (raw ones too) are
// blanked, then each brace is a namespace's, a type's (class, struct, union, enum), a function's
// (its head, since the last ';', '{' or '}', ends in ')' and its qualifiers: a constructor's
// initializers end so too) or a block inside one. It is checked first on a seeded family of
// generated sources whose functions' lengths are known, then on the tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct function_span {
  std::size_t first_line = 0; // 1-based: the line of its opening brace
  std::size_t lines = 0;      // opening brace to closing brace, both counted
};

// The text with comments and literals replaced by spaces (newlines kept, so lines still count).
std::string blanked(const std::string &s) {
  std::string out = s;
  std::size_t i = 0;
  const auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n')
        out[k] = ' ';
  };
  while (i < s.size()) {
    if (s.compare(i, 2, "//") == 0) {
      const std::size_t e = s.find('\n', i);
      blank(i, e == std::string::npos ? s.size() : e);
      i = e == std::string::npos ? s.size() : e;
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t e = s.find("*/", i + 2);
      const std::size_t end = e == std::string::npos ? s.size() : e + 2;
      blank(i, end);
      i = end;
    } else if (s[i] == 'R' && i + 1 < s.size() && s[i + 1] == '"' &&
               (i == 0 ||
                !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      const std::size_t open = s.find('(', i + 2);
      const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      const std::size_t e = s.find(close, open);
      const std::size_t end = e == std::string::npos ? s.size() : e + close.size();
      blank(i, end);
      i = end;
    } else if (s[i] == '"' || s[i] == '\'') {
      // A digit separator (1'000) is no character literal.
      if (s[i] == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))) {
        ++i;
        continue;
      }
      const char q = s[i];
      std::size_t k = i + 1;
      while (k < s.size() && s[k] != q && s[k] != '\n')
        k += s[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// What the text before a '{' (since the last ';', '{' or '}') opens outside any function: 'n' a
// namespace (or extern "C"), 't' a type, 'f' a function's body, 'b' anything else.
char brace_kind(const std::string &head) {
  static const std::regex ns(R"(^\s*(inline\s+)?namespace\b|^\s*extern\s*$)");
  static const std::regex type(R"(\b(class|struct|union|enum)\b[^()]*$)");
  static const std::regex quals(
      R"(\)\s*((const|noexcept|override|final|mutable|volatile|&|&&)\s*|->[^{]*|noexcept\s*\([^)]*\)\s*)*$)");
  if (std::regex_search(head, ns))
    return 'n';
  if (std::regex_search(head, type))
    return 't';
  if (head.find('=') != std::string::npos && head.find('(') == std::string::npos)
    return 'b'; // an initializer (x = {...})
  return std::regex_search(head, quals) ? 'f' : 'b';
}

// Every function's span in a source text: the outermost function bodies (a lambda or a local
// type's member inside one counts as the function's).
std::vector<function_span> functions_of(const std::string &source) {
  const std::string s = blanked(source);
  std::vector<function_span> out;
  std::vector<char> stack; // 'n' namespace, 't' type, 'f' function, 'b' block
  std::size_t line = 1, head_from = 0, open_line = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n')
      ++line;
    if (c == ';') {
      head_from = i + 1;
    } else if (c == '{') {
      const bool in_function = std::find(stack.begin(), stack.end(), 'f') != stack.end();
      const char kind = in_function ? 'b' : brace_kind(s.substr(head_from, i - head_from));
      if (kind == 'f')
        open_line = line;
      stack.push_back(kind);
      head_from = i + 1;
    } else if (c == '}') {
      if (!stack.empty()) {
        const char kind = stack.back();
        stack.pop_back();
        if (kind == 'f')
          out.push_back({open_line, line - open_line + 1});
      }
      head_from = i + 1;
    }
  }
  return out;
}

// A generated source: namespaces, types with inline members, free functions of known lengths
// whose bodies hold blocks, lambdas, local types, literals and comments with braces, and
// namespace-scope initializers; `want` gets each function's span.
std::string generated_source(std::mt19937 &rng, std::vector<function_span> &want) {
  std::ostringstream o;
  std::size_t line = 1;
  const auto put = [&](const std::string &text) {
    o << text << "\n";
    line += 1 + std::size_t(std::count(text.begin(), text.end(), '\n'));
  };
  const char *noise[] = {"  int a = 1; // a comment with { a brace",
                         "  const char *s = \"{ not a block } // nor a comment\";",
                         "  char c = '{';",
                         "  /* a comment { with } braces */ int b = 2;",
                         "  const char *r = R\"x(raw { text } \" here)x\";",
                         "  if (a > 0) {\n    a = 2;\n  }",
                         "  for (int i = 0; i < 3; ++i) {\n    if (i) {\n      a += i;\n    }\n  }",
                         "  auto f = [&](int x) -> int {\n    return x + a;\n  };",
                         "  struct local {\n    int v() const { return 1; }\n  };",
                         "  int xs[] = {1, 2, 3};",
                         "  std::size_t n = 1'000'000;",
                         "  while (a < 10) {\n    ++a;\n  }"};
  const char *heads[] = {"int f%d(int x) {",
                         "void ns::f%d(const std::string &s) const {",
                         "auto f%d(int x) -> std::vector<int> {",
                         "template <class T> T f%d(T x) noexcept {",
                         "thing::thing(int x) : a_(x), b_(x + 1) {",
                         "std::vector<int>\nf%d(int a,\n     int b) {",
                         "__device__ __forceinline__ unsigned f%d(unsigned x) {"};
  put("// generated");
  put("#include <vector>");
  put("namespace gen {");
  const int items = 3 + int(rng() % 6);
  for (int k = 0; k < items; ++k) {
    const int what = int(rng() % 4);
    if (what == 0) { // a namespace-scope initializer and a type with an inline member
      put("const int table[] = {1, 2, {3}};");
      put("struct item_" + std::to_string(k) + " : base {");
      put("  int n = 0;");
      const std::size_t first = line;
      put("  int get() const {\n    return n;\n  }");
      want.push_back({first, 3});
      put("};");
      continue;
    }
    if (what == 1) {
      put("namespace inner {");
      put("enum class e { a, b };");
    }
    char head[128];
    std::snprintf(head, sizeof head, heads[rng() % std::size(heads)], k);
    put(head);
    const std::size_t first = line - 1; // the head's last line holds the brace
    const int body = int(rng() % 120);
    for (int b = 0; b < body;) {
      const std::string text = noise[rng() % std::size(noise)];
      put(text);
      b += 1 + int(std::count(text.begin(), text.end(), '\n'));
    }
    put("}");
    want.push_back({first, line - first});
    if (what == 1)
      put("} // namespace inner");
  }
  put("} // namespace gen");
  return o.str();
}

std::string read_file(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream t;
  t << in.rdbuf();
  return t.str();
}

} // namespace

TEST(FunctionLength, TheScannerFindsEveryGeneratedFunctionAndItsLength) {
  std::mt19937 rng(80);
  std::size_t functions = 0;
  for (int c = 0; c < 300; ++c) {
    std::vector<function_span> want;
    const std::string src = generated_source(rng, want);
    const auto got = functions_of(src);
    ASSERT_EQ(got.size(), want.size()) << "case " << c << ":\n" << src;
    for (std::size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(got[k].first_line, want[k].first_line) << "case " << c << " function " << k;
      EXPECT_EQ(got[k].lines, want[k].lines) << "case " << c << " function " << k << ":\n" << src;
    }
    functions += want.size();
  }
  EXPECT_GT(functions, 1000u);
}

TEST(FunctionLength, NoFunctionOfTheSourcesIsOver80Lines) {
  const fs::path root = GPUPROBE_SOURCE_DIR;
  std::size_t files = 0, functions = 0;
  for (const char *dir : {"common", "model", "analysis", "probes", "findings", "tune", "report",
                          "pipeline", "cli", "allocators", "bench"}) {
    for (const auto &e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh")
        continue;
      ++files;
      for (const auto &f : functions_of(read_file(e.path()))) {
        ++functions;
        EXPECT_LE(f.lines, 80u) << fs::relative(e.path(), root).string() << ":" << f.first_line
                                << ": a function of " << f.lines << " lines";
      }
    }
  }
  EXPECT_GT(files, 150u);
  EXPECT_GT(functions, 1000u);
}

// docs/layout.md's claim for cli/: one file per subcommand that is no probe's, no file over 150
// lines, no function over 60.
TEST(FunctionLength, TheCliFilesAreShortAndTheirFunctionsShorter) {
  const fs::path root = fs::path(GPUPROBE_SOURCE_DIR) / "cli";
  std::size_t files = 0;
  for (const auto &e : fs::directory_iterator(root)) {
    if (e.path().extension() != ".cpp")
      continue;
    ++files;
    const std::string text = read_file(e.path());
    const auto lines = std::size_t(std::count(text.begin(), text.end(), '\n'));
    EXPECT_LE(lines, 150u) << "cli/" << e.path().filename().string() << ": " << lines << " lines";
    for (const auto &f : functions_of(text))
      EXPECT_LE(f.lines, 60u) << "cli/" << e.path().filename().string() << ":" << f.first_line
                              << ": a function of " << f.lines << " lines";
  }
  EXPECT_GT(files, 10u);
}
