// settings_loader.cpp -- a C++ exception escapes a noexcept function.
//
// apply_settings() is declared noexcept, but std::stoi() inside it throws
// std::invalid_argument for the port "http-alt".  The exception unwinder
// (libgcc_s) asks libstdc++'s personality routine about apply_settings' frame,
// which finds the noexcept boundary and calls std::terminate() during the
// search phase; the default terminate handler prints the exception and calls
// abort(): SIGABRT with libstdc++ and libgcc_s frames on the stack.
#include <cstdio>
#include <map>
#include <string>

struct ServerSettings {
    int port = 80;
    int workers = 1;
    std::string log_level = "info";
};

using RawSettings = std::map<std::string, std::string>;

__attribute__((noinline)) static int parse_number(const RawSettings &raw, const char *key, int fallback)
{
    auto it = raw.find(key);
    return it == raw.end() ? fallback : std::stoi(it->second);
}

__attribute__((noinline)) static ServerSettings apply_settings(const RawSettings &raw) noexcept
{
    ServerSettings settings;
    settings.workers = parse_number(raw, "workers", settings.workers);
    settings.port = parse_number(raw, "port", settings.port); // throws: not a number
    auto level = raw.find("log_level");
    if (level != raw.end())
        settings.log_level = level->second;
    return settings;
}

int main()
{
    const RawSettings raw = {{"workers", "4"}, {"port", "http-alt"}, {"log_level", "debug"}};
    ServerSettings settings = apply_settings(raw);
    std::printf("listening on %d with %d workers, log level %s\n", settings.port, settings.workers,
                settings.log_level.c_str());
    return 0;
}
