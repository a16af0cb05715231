// The command line written down once: every option, the pipeline stages, the examples and the
// exit codes. --help, the unknown-option check, the man page and the shell completions
// (warpcsv-docgen) are all made from these tables; tests/docs/check_docs.sh compares them with
// README.md's option table.
#pragma once
#include <string>
#include <vector>

namespace warpcsv::cli {

// What a shell completes for an option's value.
enum class Complete {
  None,     // free text (a number, a character, a spec)
  Choices,  // one of OptionSpec::choices
  File,     // a file name
};

struct OptionSpec {
  char short_name;        // 0: none
  const char* long_name;  // without the leading "--"
  const char* value;      // the value's name in --help ("C", "FILE", "N"); nullptr: a flag
  // --help's text: its lines as --help prints them, joined by '\n' (the man page and the
  // completions join them with spaces). --help and the man page print an option that
  // joins_previous on the line of the one before, with that one's text (zsh shows its own).
  const char* help;
  const char* section;           // "Input", "Output", "Execution": --help's headings
  Complete complete;             // what a shell completes for the value
  std::vector<const char*> choices;  // with Complete::Choices (they may be a prefix of what is valid)
  bool repeatable = false;       // may be given more than once (--null)
  bool joins_previous = false;   // --help prints it on the line of the option before (--no-progress)
};

struct StageSpec {
  const char* name;     // the keyword ("filter")
  const char* syntax;   // what follows it ("EXPR"), "" for none
  const char* summary;  // one line
  const char* aliases;  // other spellings, "" for none
};

// The command's arguments after the options: PIPELINE and FILE.
struct OperandSpec {
  const char* name;
  const char* help;  // lines joined by '\n', as --help prints them
};

struct ExampleSpec {
  const char* comment;  // one line, without "# "
  const char* command;  // the command; continuation lines are indented as --help prints them
};

struct ExitCodeSpec {
  int code;
  const char* brief;    // --help's last lines ("usage error")
  const char* meaning;  // the man page's longer text
};

const std::vector<OptionSpec>& option_table();
const std::vector<StageSpec>& stage_table();
const std::vector<OperandSpec>& operand_table();
const std::vector<ExampleSpec>& example_table();
const std::vector<ExitCodeSpec>& exit_code_table();

// The option with this long name (no "--"), or nullptr.
const OptionSpec* find_option(const std::string& long_name);
// The option with this short name, or nullptr.
const OptionSpec* find_short_option(char short_name);

// CLI11's name for an option: "-d,--delimiter" or "--names". Throws std::logic_error for a
// long name that is not in the table, so that a registration cannot drift from it.
std::string cli11_name(const std::string& long_name);

// The synopsis line and the one-line description.
extern const char* const kSynopsis;     // "warpcsv [OPTIONS] PIPELINE [FILE...]"
extern const char* const kDescription;  // "filter / group-by / aggregate pipelines over CSV files"

// --help's PIPELINE and FILE lines.
std::string operands_help();
// --help's option section: the headings and the aligned option lines, as --help prints them.
std::string options_help();
// --help's examples ("  # comment" then the command), each followed by an empty line.
std::string examples_help();
// --help's last lines: "Exit codes: 0 ok (...), 1 assert failed, ..." wrapped at 80 columns.
std::string exit_codes_help();

}  // namespace warpcsv::cli
