// A probe's subcommand as its cli.cpp declares it (probes/kit.hpp), turned into CLI11's: the
// shared options, then each flag with its default shown, its range, its values, in that order.
#include "cli/common.hpp"

#include <memory>
#include <type_traits>

namespace gpuprobe::cli {

namespace {

void add_flag(CLI::App &app, probes::kit::flag &f) {
  CLI::Option *o = std::visit(
      [&](auto &t) -> CLI::Option * {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, std::function<void()>>)
          return app.add_flag_callback(f.names, t, f.help);
        else if constexpr (std::is_same_v<T, bool *>)
          return app.add_flag(f.names, *t, f.help);
        else
          return app.add_option(f.names, *t, f.help);
      },
      f.target);
  if (f.required)
    o->required();
  if (f.existing_file)
    o->check(CLI::ExistingFile);
  if (f.show_default)
    o->capture_default_str();
  if (f.range)
    std::visit([&](const auto &r) { o->check(CLI::Range(r.first, r.second)); }, *f.range);
  if (!f.one_of.empty())
    o->check(CLI::IsMember(f.one_of));
}

} // namespace

void add_command(CLI::App &parent, probes::kit::command c) {
  auto *app = parent.add_subcommand(c.name, c.description);
  app->footer(c.footer);
  auto &common = *c.common;
  if (!c.input.empty())
    add_input_option(*app, common, c.input);
  if (c.device)
    add_device_option(*app, common);
  if (!c.out.empty())
    add_out_option(*app, common, c.out);
  if (c.seed)
    add_seed_option(*app, common);
  for (auto &f : c.flags)
    add_flag(*app, f);
  const bool checks_out = !c.out.empty();
  app->callback([&common, checks_out, run = std::move(c.run)] {
    if (checks_out)
      check_output_path(common.out);
    run();
  });
}

} // namespace gpuprobe::cli
