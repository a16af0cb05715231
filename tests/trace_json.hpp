// Reading a --trace file back in tests: a small strict JSON parser (RFC 8259:
// no trailing commas, no comments, nothing after the value) and the trace's
// events, so the tests depend on no JSON library or Python.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace warpcsv::testing {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;                          // Array
  std::vector<std::pair<std::string, Json>> fields;  // Object, in file order

  bool has(const std::string& key) const { return find(key) != nullptr; }
  const Json* find(const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return &v;
    return nullptr;
  }
  const Json& operator[](const std::string& key) const {
    static const Json none;
    const Json* v = find(key);
    return v ? *v : none;
  }
};

// Parses `text` as exactly one JSON value; false (with the byte offset of the
// problem in *error_at) when it is not valid JSON.
class JsonParser {
 public:
  static bool parse(const std::string& text, Json* out, size_t* error_at = nullptr) {
    JsonParser p(text);
    const bool ok = p.value(*out, 0) && (p.ws(), p.i_ == text.size());
    if (!ok && error_at) *error_at = p.i_;
    return ok;
  }

 private:
  explicit JsonParser(const std::string& t) : t_(t) {}
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  bool close() {  // past a closing bracket or brace
    ++i_;
    return true;
  }
  bool lit(const char* word) {
    size_t k = 0;
    for (; word[k]; ++k)
      if (i_ + k >= t_.size() || t_[i_ + k] != word[k]) return false;
    i_ += k;
    return true;
  }
  bool value(Json& v, int depth) {
    if (depth > 64) return false;
    ws();
    if (i_ >= t_.size()) return false;
    const char c = t_[i_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.kind = Json::String;
      return string(v.str);
    }
    if (c == 't' || c == 'f') {
      v.kind = Json::Bool;
      v.b = c == 't';
      return lit(v.b ? "true" : "false");
    }
    if (c == 'n') {
      v.kind = Json::Null;
      return lit("null");
    }
    return number(v);
  }
  bool object(Json& v, int depth) {
    v.kind = Json::Object;
    ++i_;
    ws();
    if (i_ < t_.size() && t_[i_] == '}') return close();
    for (;;) {
      ws();
      std::string key;
      if (i_ >= t_.size() || t_[i_] != '"' || !string(key)) return false;
      ws();
      if (i_ >= t_.size() || t_[i_] != ':') return false;
      ++i_;
      Json item;
      if (!value(item, depth + 1)) return false;
      v.fields.emplace_back(std::move(key), std::move(item));
      ws();
      if (i_ < t_.size() && t_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == '}') return close();
      return false;
    }
  }
  bool array(Json& v, int depth) {
    v.kind = Json::Array;
    ++i_;
    ws();
    if (i_ < t_.size() && t_[i_] == ']') return close();
    for (;;) {
      Json item;
      if (!value(item, depth + 1)) return false;
      v.items.push_back(std::move(item));
      ws();
      if (i_ < t_.size() && t_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == ']') return close();
      return false;
    }
  }
  bool string(std::string& out) {
    ++i_;  // the opening quote
    while (i_ < t_.size()) {
      const auto c = static_cast<unsigned char>(t_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;  // control characters must be escaped
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (i_ >= t_.size()) return false;
      const char e = t_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > t_.size()) return false;
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = t_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
            else return false;
          }
          out += cp < 0x80 ? static_cast<char>(cp) : '?';  // the tests need no more
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool number(Json& v) {
    const size_t start = i_;
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    auto digits = [&] {
      const size_t d = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      return i_ > d;
    };
    if (i_ < t_.size() && t_[i_] == '0') ++i_;  // no leading zeros
    else if (!digits()) return false;
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    v.kind = Json::Number;
    v.num = std::strtod(t_.substr(start, i_ - start).c_str(), nullptr);
    return true;
  }

  const std::string& t_;
  size_t i_ = 0;
};

// A trace's events as the tests look at them.
struct TraceEvent {
  std::string name, cat, ph;
  double ts = 0, dur = 0;
  int pid = -1, tid = -1;
  std::map<std::string, double> args;  // numeric ones
  std::string arg_name;                // metadata events: args.name
};

struct Trace {
  bool valid = false;        // valid JSON of the trace's shape
  std::string problem;       // why not
  std::vector<TraceEvent> events;
  std::string display_unit;  // displayTimeUnit

  std::vector<const TraceEvent*> complete(const std::string& cat) const {
    std::vector<const TraceEvent*> out;
    for (const auto& e : events)
      if (e.ph == "X" && e.cat == cat) out.push_back(&e);
    return out;
  }
  // The name a metadata event gives process `pid` ("process_name") or
  // thread (pid, tid) ("thread_name"); empty when none.
  std::string process_name(int pid) const {
    for (const auto& e : events)
      if (e.ph == "M" && e.name == "process_name" && e.pid == pid) return e.arg_name;
    return "";
  }
  std::string thread_name(int pid, int tid) const {
    for (const auto& e : events)
      if (e.ph == "M" && e.name == "thread_name" && e.pid == pid && e.tid == tid) return e.arg_name;
    return "";
  }
};

// Whether complete events of one track (pid, tid) nest, as trace viewers
// need: each lies inside, or after, every event still open before it
// (`slack_us`: the file's rounding, a GPU's clock conversion).
inline bool nests(std::vector<const TraceEvent*> evs, double slack_us) {
  std::sort(evs.begin(), evs.end(), [](const TraceEvent* a, const TraceEvent* b) {
    return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
  });
  std::vector<double> open_ends;
  for (const TraceEvent* e : evs) {
    while (!open_ends.empty() && open_ends.back() <= e->ts + slack_us) open_ends.pop_back();
    if (!open_ends.empty() && e->ts + e->dur > open_ends.back() + slack_us) return false;
    open_ends.push_back(e->ts + e->dur);
  }
  return true;
}

// Parses a trace file's text: {"traceEvents": [...], "displayTimeUnit": ...},
// each event an object with name, ph, pid and tid; complete events ("X")
// with cat, ts and dur too.
inline Trace parse_trace(const std::string& text) {
  Trace t;
  Json root;
  size_t at = 0;
  if (!JsonParser::parse(text, &root, &at)) {
    t.problem = "not valid JSON at byte " + std::to_string(at);
    return t;
  }
  const Json* evs = root.find("traceEvents");
  if (root.kind != Json::Object || !evs || evs->kind != Json::Array) {
    t.problem = "no traceEvents array";
    return t;
  }
  t.display_unit = root["displayTimeUnit"].str;
  for (const Json& e : evs->items) {
    if (e.kind != Json::Object || e["name"].kind != Json::String || e["ph"].kind != Json::String ||
        e["pid"].kind != Json::Number || e["tid"].kind != Json::Number) {
      t.problem = "an event without name, ph, pid or tid";
      return t;
    }
    TraceEvent ev;
    ev.name = e["name"].str;
    ev.ph = e["ph"].str;
    ev.pid = static_cast<int>(e["pid"].num);
    ev.tid = static_cast<int>(e["tid"].num);
    if (ev.ph == "X") {
      if (e["cat"].kind != Json::String || e["ts"].kind != Json::Number || e["dur"].kind != Json::Number) {
        t.problem = "a complete event without cat, ts or dur: " + ev.name;
        return t;
      }
      ev.cat = e["cat"].str;
      ev.ts = e["ts"].num;
      ev.dur = e["dur"].num;
    }
    for (const auto& [k, v] : e["args"].fields) {
      if (v.kind == Json::Number) ev.args[k] = v.num;
      if (k == "name" && v.kind == Json::String) ev.arg_name = v.str;
    }
    t.events.push_back(std::move(ev));
  }
  t.valid = true;
  return t;
}

}  // namespace warpcsv::testing
