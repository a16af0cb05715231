// Date parts and truncations (core/datetime.hpp) against a calendar walked
// one day at a time from 1900-01-01 (a Monday), which shares no arithmetic
// with the code under test; and through the pipeline language, with its
// type and usage errors. strftime and date_diff against values DuckDB gave.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "plan_error.hpp"
#include "warpcsv/core/datetime.hpp"
#include "warpcsv/core/parse.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

struct Day {
  int64_t days;  // since 1970-01-01
  int y, m, d, dow, doy;
};

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int month_days(int y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

// Every day from 1900-01-01 to 2100-12-31, with its civil date, weekday and day of the year.
std::vector<Day> walk_calendar() {
  std::vector<Day> days;
  Day c{-25567, 1900, 1, 1, 1, 1};  // 1900-01-01, a Monday, 25567 days before 1970-01-01
  while (c.y <= 2100) {
    days.push_back(c);
    ++c.days;
    c.dow = (c.dow + 1) % 7;
    ++c.doy;
    if (++c.d > month_days(c.y, c.m)) {
      c.d = 1;
      if (++c.m > 12) {
        c.m = 1;
        ++c.y;
        c.doy = 1;
      }
    }
  }
  return days;
}

}  // namespace

TEST_CASE("date parts agree with a calendar walked day by day", "[datetime]") {
  const std::vector<Day> days = walk_calendar();
  REQUIRE(days[25567].y == 1970);
  REQUIRE(days[25567].days == 0);
  REQUIRE(days[25567].dow == 4);  // a Thursday
  for (size_t i = 0; i < days.size(); ++i) {
    const Day& c = days[i];
    INFO(c.y << "-" << c.m << "-" << c.d);
    REQUIRE(date_part(c.days, false, DatePart::Year) == c.y);
    REQUIRE(date_part(c.days, false, DatePart::Month) == c.m);
    REQUIRE(date_part(c.days, false, DatePart::Day) == c.d);
    REQUIRE(date_part(c.days, false, DatePart::Quarter) == (c.m + 2) / 3);
    REQUIRE(date_part(c.days, false, DatePart::Dow) == c.dow);
    REQUIRE(date_part(c.days, false, DatePart::Isodow) == (c.dow == 0 ? 7 : c.dow));
    REQUIRE(date_part(c.days, false, DatePart::Doy) == c.doy);
    REQUIRE(date_part(c.days, false, DatePart::Epoch) == c.days * 86400);
    // ISO week: the week of the day's Thursday, numbered in the Thursday's year.
    const size_t back_to_monday = static_cast<size_t>((c.dow + 6) % 7);
    if (i >= back_to_monday && i - back_to_monday + 3 < days.size()) {
      const Day& thursday = days[i - back_to_monday + 3];
      REQUIRE(date_part(c.days, false, DatePart::Week) == (thursday.doy - 1) / 7 + 1);
    }
    // Truncations land on the first day of their unit, on or before the day.
    const int64_t month_start = c.days - (c.d - 1);
    REQUIRE(date_trunc(c.days, false, DateUnit::Month) == month_start);
    REQUIRE(date_trunc(c.days, false, DateUnit::Year) == c.days - (c.doy - 1));
    REQUIRE(date_trunc(c.days, false, DateUnit::Week) == c.days - (c.dow + 6) % 7);
    REQUIRE(date_trunc(c.days, false, DateUnit::Day) == c.days);
    REQUIRE(date_trunc(c.days, false, DateUnit::Hour) == c.days);
    const int64_t q = date_trunc(c.days, false, DateUnit::Quarter);
    REQUIRE(date_part(q, false, DatePart::Day) == 1);
    REQUIRE(date_part(q, false, DatePart::Month) == (c.m - 1) / 3 * 3 + 1);
    REQUIRE(c.days - q < 92);
  }
}

TEST_CASE("timestamp parts and truncations", "[datetime]") {
  std::mt19937_64 rng(31);
  const int64_t kDay = 86400000000LL;
  for (int i = 0; i < 20000; ++i) {
    const int64_t days = static_cast<int64_t>(rng() % 146000) - 73000;  // 1770 to 2170
    const int64_t h = static_cast<int64_t>(rng() % 24), mi = static_cast<int64_t>(rng() % 60),
                  s = static_cast<int64_t>(rng() % 60), us = static_cast<int64_t>(rng() % 1000000);
    const int64_t t = days * kDay + ((h * 60 + mi) * 60 + s) * 1000000 + us;
    INFO("timestamp " << t);
    REQUIRE(date_part(t, true, DatePart::Hour) == h);
    REQUIRE(date_part(t, true, DatePart::Minute) == mi);
    REQUIRE(date_part(t, true, DatePart::Second) == s);
    REQUIRE(date_part(t, true, DatePart::Date) == days);
    for (DatePart p : {DatePart::Year, DatePart::Month, DatePart::Day, DatePart::Dow, DatePart::Week, DatePart::Doy})
      REQUIRE(date_part(t, true, p) == date_part(days, false, p));
    REQUIRE(timestamp_epoch(t) == static_cast<double>(t) / 1e6);
    REQUIRE(date_trunc(t, true, DateUnit::Second) == t - us);
    REQUIRE(date_trunc(t, true, DateUnit::Minute) == t - us - s * 1000000);
    REQUIRE(date_trunc(t, true, DateUnit::Hour) == t - us - (mi * 60 + s) * 1000000);
    REQUIRE(date_trunc(t, true, DateUnit::Day) == days * kDay);
    REQUIRE(date_trunc(t, true, DateUnit::Month) == date_trunc(days, false, DateUnit::Month) * kDay);
  }
}

TEST_CASE("date functions in the language: types and errors", "[datetime]") {
  const std::vector<OutputColumn> schema = {{"d", ColumnType{Type::Date, 0}},
                                            {"t", ColumnType{Type::Timestamp, 0}},
                                            {"s", ColumnType{Type::String, 0}}};
  auto type_of = [&](const std::string& expr) {
    return build_plan("select " + expr + " as x", schema).output.back().type.type;
  };
  CHECK(type_of("year(d)") == Type::Int);
  CHECK(type_of("week(t)") == Type::Int);
  CHECK(type_of("epoch(d)") == Type::Int);
  CHECK(type_of("epoch(t)") == Type::Float);
  CHECK(type_of("date(t)") == Type::Date);
  CHECK(type_of("date(d)") == Type::Date);
  CHECK(type_of("date_trunc('month', t)") == Type::Timestamp);
  CHECK(type_of("date_trunc('WEEK', d)") == Type::Date);
  auto error_of = [&](const std::string& pipeline) { return testing::plan_error(pipeline, schema); };
  CHECK(error_of("select year(s)").find("year() needs a date or timestamp, found") != std::string::npos);
  CHECK(error_of("select date_trunc('fortnight', d)").find("'hour', 'minute' or 'second'; found") !=
        std::string::npos);
  CHECK(error_of("select date_trunc(s, d)").find("date_trunc()'s first argument is a unit in quotes") !=
        std::string::npos);
  CHECK(error_of("select month(d, t)").find("month(t)") != std::string::npos);
  CHECK(error_of("select yeer(d)").find("did you mean 'year'") != std::string::npos);
}

namespace {

const char* const kDuckFormat = "%Y-%m-%d %H:%M:%S %j %a %A %b %B";

std::string strftime_of(int64_t v, bool is_timestamp, const std::string& fmt) {
  char out[512];
  const uint32_t n = format_strftime(v, is_timestamp, fmt.data(), static_cast<uint32_t>(fmt.size()), out);
  return std::string(out, n);
}

struct Formatted {
  int64_t v;
  const char* text;
};

}  // namespace

// Expected texts are DuckDB 1.5's strftime(v, kDuckFormat): hand-picked edges
// (years 0000, 0001, 9999, leap days, the epoch), random values over years
// 0001 ... 9999, and years before 0 and after 9999.
TEST_CASE("strftime of timestamps matches DuckDB", "[datetime][strftime]") {
  const Formatted kCases[] = {
    {-62167219200000000LL, "0000-01-01 00:00:00 001 Sat Saturday Jan January"},
    {-62162078400000000LL, "0000-02-29 12:00:00 060 Tue Tuesday Feb February"},
    {-62135596800000001LL, "0000-12-31 23:59:59 366 Sun Sunday Dec December"},
    {-62135596800000000LL, "0001-01-01 00:00:00 001 Mon Monday Jan January"},
    {-59027075696000000LL, "0099-07-04 06:05:04 185 Sat Saturday Jul July"},
    {-30610224001000000LL, "0999-12-31 23:59:59 365 Tue Tuesday Dec December"},
    {-30610224000000000LL, "1000-01-01 00:00:00 001 Wed Wednesday Jan January"},
    {-12219292800000000LL, "1582-10-15 00:00:00 288 Fri Friday Oct October"},
    {-11670994739000000LL, "1600-02-29 01:01:01 060 Tue Tuesday Feb February"},
    {-2208988800500000LL, "1899-12-31 23:59:59 365 Sun Sunday Dec December"},
    {-2203929945000000LL, "1900-02-28 13:14:15 059 Wed Wednesday Feb February"},
    {-2203891200000000LL, "1900-03-01 00:00:00 060 Thu Thursday Mar March"},
    {-1LL, "1969-12-31 23:59:59 365 Wed Wednesday Dec December"},
    {0LL, "1970-01-01 00:00:00 001 Thu Thursday Jan January"},
    {1LL, "1970-01-01 00:00:00 001 Thu Thursday Jan January"},
    {946684799000000LL, "1999-12-31 23:59:59 365 Fri Friday Dec December"},
    {951782400000000LL, "2000-02-29 00:00:00 060 Tue Tuesday Feb February"},
    {978266096000000LL, "2000-12-31 12:34:56 366 Sun Sunday Dec December"},
    {978307201000000LL, "2001-01-01 00:00:01 001 Mon Monday Jan January"},
    {1599642549000000LL, "2020-09-09 09:09:09 253 Wed Wednesday Sep September"},
    {1622501100000000LL, "2021-05-31 22:45:00 151 Mon Monday May May"},
    {1735689599000000LL, "2024-12-31 23:59:59 366 Tue Tuesday Dec December"},
    {4107542400000000LL, "2100-03-01 00:00:00 060 Mon Monday Mar March"},
    {74204706645123456LL, "4321-06-15 18:30:45 166 Wed Wednesday Jun June"},
    {253402300799999999LL, "9999-12-31 23:59:59 365 Fri Friday Dec December"},
    {139118586678405098LL, "6378-06-29 19:51:18 180 Thu Thursday Jun June"},
    {252574785835089686LL, "9973-10-11 06:43:55 284 Thu Thursday Oct October"},
    {207625001504672164LL, "8549-05-17 03:31:44 137 Sat Saturday May May"},
    {-41233504083247566LL, "0663-05-13 08:51:56 133 Wed Wednesday May May"},
    {197614018084456383LL, "8232-02-21 06:48:04 052 Tue Tuesday Feb February"},
    {200942301715985059LL, "8337-08-11 02:01:55 223 Wed Wednesday Aug August"},
    {193546724473679968LL, "8103-04-03 03:01:13 093 Tue Tuesday Apr April"},
    {205233568262948397LL, "8473-08-04 12:31:02 216 Fri Friday Aug August"},
    {44034084024547510LL, "3365-05-20 18:00:24 140 Mon Monday May May"},
    {-47653643674987957LL, "0459-12-01 04:45:25 335 Mon Monday Dec December"},
    {81161880109204713LL, "4541-12-01 14:41:49 335 Fri Friday Dec December"},
    {120264116591671446LL, "5781-01-06 19:03:11 006 Sat Saturday Jan January"},
    {139667666257920387LL, "6395-11-22 21:57:37 326 Wed Wednesday Nov November"},
    {37347680924520033LL, "3153-07-02 19:48:44 183 Thu Thursday Jul July"},
    {-14670124002869839LL, "1505-02-14 21:33:17 045 Tue Tuesday Feb February"},
    {-18852393545293043LL, "1372-08-04 00:00:54 217 Tue Tuesday Aug August"},
    {7662401252390564LL, "2212-10-24 04:47:32 298 Sat Saturday Oct October"},
    {181979549926438097LL, "7736-09-13 18:58:46 257 Thu Thursday Sep September"},
    {152305144707779693LL, "6796-05-11 00:38:27 132 Sat Saturday May May"},
    {-53677305026415694LL, "0269-01-12 21:29:33 012 Tue Tuesday Jan January"},
    {217388368543612431LL, "8858-10-06 01:55:43 279 Sun Sunday Oct October"},
    {167869101117473905LL, "7289-07-23 09:51:57 204 Sat Saturday Jul July"},
    {-39270799501422874LL, "0725-07-23 20:34:58 204 Thu Thursday Jul July"},
    {87298422808569988LL, "4736-05-18 09:53:28 139 Mon Monday May May"},
    {-38052537412797738LL, "0764-03-01 02:43:07 061 Sun Sunday Mar March"},
    {111794499068350140LL, "5512-08-17 19:31:08 230 Sat Saturday Aug August"},
    {126017423742284817LL, "5963-05-02 23:55:42 122 Thu Thursday May May"},
    {203171243203866001LL, "8408-03-29 00:26:43 089 Sat Saturday Mar March"},
    {97251336158743537LL, "5051-10-10 04:02:38 283 Fri Friday Oct October"},
    {54475574410064947LL, "3696-04-05 08:00:10 096 Thu Thursday Apr April"},
    {16736785859393646LL, "2500-05-14 19:10:59 134 Fri Friday May May"},
    {225558802681938371LL, "9117-09-04 06:58:01 247 Tue Tuesday Sep September"},
    {220418525180053693LL, "8954-10-14 08:06:20 287 Mon Monday Oct October"},
    {243211563900280538LL, "9677-01-24 15:45:00 024 Sun Sunday Jan January"},
    {176164067118980231LL, "7552-06-01 23:05:18 153 Sun Sunday Jun June"},
    {48310968439280017LL, "3500-11-30 17:27:19 334 Fri Friday Nov November"},
    {-48520650543154434LL, "0432-06-10 09:30:56 162 Thu Thursday Jun June"},
    {182332327181070682LL, "7747-11-18 20:39:41 322 Sat Saturday Nov November"},
    {5136261414180332LL, "2132-10-05 11:16:54 279 Sun Sunday Oct October"},
    {41263471821769875LL, "3277-08-02 11:30:21 214 Mon Monday Aug August"},
    {-62198596800000000LL, "-1-01-02 20:00:00 002 Sat Saturday Jan January"},
    {-65980477239591334LL, "-121-03-01 01:39:20 060 Sat Saturday Mar March"},
    {-93000000000000000LL, "-978-12-13 02:40:00 347 Fri Friday Dec December"},
    {261721875805619208LL, "10263-08-21 09:03:25 233 Fri Friday Aug August"},
    {300000000000000000LL, "11476-08-15 05:20:00 228 Tue Tuesday Aug August"},
  };
  for (const Formatted& c : kCases) {
    INFO("timestamp " << c.v);
    CHECK(strftime_of(c.v, true, kDuckFormat) == c.text);
  }
}

TEST_CASE("strftime of dates matches DuckDB", "[datetime][strftime]") {
  const Formatted kCases[] = {
    {-719528, "0000-01-01 00:00:00 001 Sat Saturday Jan January"},
    {-719469, "0000-02-29 00:00:00 060 Tue Tuesday Feb February"},
    {-719163, "0000-12-31 00:00:00 366 Sun Sunday Dec December"},
    {-719162, "0001-01-01 00:00:00 001 Mon Monday Jan January"},
    {-141438, "1582-10-04 00:00:00 277 Mon Monday Oct October"},
    {-79366, "1752-09-14 00:00:00 258 Thu Thursday Sep September"},
    {-25567, "1900-01-01 00:00:00 001 Mon Monday Jan January"},
    {-25203, "1900-12-31 00:00:00 365 Mon Monday Dec December"},
    {-1, "1969-12-31 00:00:00 365 Wed Wednesday Dec December"},
    {0, "1970-01-01 00:00:00 001 Thu Thursday Jan January"},
    {1, "1970-01-02 00:00:00 002 Fri Friday Jan January"},
    {11016, "2000-02-29 00:00:00 060 Tue Tuesday Feb February"},
    {11322, "2000-12-31 00:00:00 366 Sun Sunday Dec December"},
    {19358, "2023-01-01 00:00:00 001 Sun Sunday Jan January"},
    {19782, "2024-02-29 00:00:00 060 Thu Thursday Feb February"},
    {20088, "2024-12-31 00:00:00 366 Tue Tuesday Dec December"},
    {2932896, "9999-12-31 00:00:00 365 Fri Friday Dec December"},
    {2330700, "8351-03-30 00:00:00 089 Fri Friday Mar March"},
    {-654729, "0177-05-31 00:00:00 151 Sat Saturday May May"},
    {2341350, "8380-05-26 00:00:00 147 Mon Monday May May"},
    {436075, "3163-12-08 00:00:00 342 Sun Sunday Dec December"},
    {2259458, "8156-03-09 00:00:00 069 Tue Tuesday Mar March"},
    {571154, "3533-10-08 00:00:00 281 Sun Sunday Oct October"},
    {2316941, "8313-07-28 00:00:00 209 Mon Monday Jul July"},
    {2296451, "8257-06-21 00:00:00 172 Sun Sunday Jun June"},
    {1444405, "5924-08-25 00:00:00 238 Mon Monday Aug August"},
    {2749116, "9496-10-28 00:00:00 302 Wed Wednesday Oct October"},
    {727338, "3961-05-21 00:00:00 141 Sun Sunday May May"},
    {2517474, "8862-08-11 00:00:00 223 Fri Friday Aug August"},
    {-645, "1968-03-27 00:00:00 087 Wed Wednesday Mar March"},
    {2005220, "7460-02-09 00:00:00 040 Thu Thursday Feb February"},
    {2760458, "9527-11-18 00:00:00 322 Fri Friday Nov November"},
    {1025217, "4776-12-13 00:00:00 348 Mon Monday Dec December"},
    {711921, "3919-03-06 00:00:00 065 Thu Thursday Mar March"},
    {1889153, "7142-04-30 00:00:00 120 Thu Thursday Apr April"},
    {697521, "3879-10-01 00:00:00 274 Wed Wednesday Oct October"},
    {2278398, "8208-01-17 00:00:00 017 Sun Sunday Jan January"},
    {-719529, "-1-12-31 00:00:00 365 Fri Friday Dec December"},
    {-730000, "-29-05-01 00:00:00 121 Sat Saturday May May"},
    {2932897, "10000-01-01 00:00:00 001 Sat Saturday Jan January"},
    {3000000, "10183-09-21 00:00:00 264 Sun Sunday Sep September"},
  };
  for (const Formatted& c : kCases) {
    INFO("date " << c.v);
    CHECK(strftime_of(c.v, false, kDuckFormat) == c.text);
    CHECK(strftime_of(c.v * 86400000000LL, true, kDuckFormat) == c.text);  // midnight
  }
}

namespace {

struct Diff {
  DateUnit unit;
  const char* a;
  const char* b;
  int64_t expected;
};

// A date's day count or a timestamp's microseconds from its text.
int64_t parse_value(const char* text, bool is_timestamp) {
  int64_t v = 0;
  const uint32_t n = static_cast<uint32_t>(std::strlen(text));
  const bool ok = is_timestamp ? parse_timestamp(text, n, &v) : parse_date(text, n, &v);
  REQUIRE(ok);
  return v;
}

}  // namespace

// Expected values are DuckDB 1.5's date_diff(unit, a, b) on DATE (10-byte
// texts) or TIMESTAMP arguments.
TEST_CASE("date_diff matches DuckDB", "[datetime][date_diff]") {
  const Diff kCases[] = {
    {DateUnit::Week, "2020-01-01", "2020-01-08", 1},
    {DateUnit::Week, "2020-01-01", "2020-01-07", 0},
    {DateUnit::Week, "2020-01-05", "2020-01-06", 0},
    {DateUnit::Week, "2020-01-06", "2020-01-05", 0},
    {DateUnit::Week, "2020-01-08", "2020-01-01", -1},
    {DateUnit::Week, "2020-01-08", "2020-01-02", 0},
    {DateUnit::Week, "1969-12-25", "1970-01-01", 1},
    {DateUnit::Week, "1969-12-26", "1970-01-01", 0},
    {DateUnit::Week, "1969-12-20", "1969-12-10", -1},
    {DateUnit::Week, "1900-01-01", "2000-01-01", 5217},
    {DateUnit::Year, "2020-12-31", "2021-01-01", 1},
    {DateUnit::Year, "2021-01-01", "2020-12-31", -1},
    {DateUnit::Year, "2020-01-01", "2020-12-31", 0},
    {DateUnit::Year, "0000-06-01", "0001-01-01", 1},
    {DateUnit::Year, "1969-12-31", "1970-01-01", 1},
    {DateUnit::Year, "0001-01-01", "9999-12-31", 9998},
    {DateUnit::Quarter, "2020-03-31", "2020-04-01", 1},
    {DateUnit::Quarter, "2020-04-01", "2020-03-31", -1},
    {DateUnit::Quarter, "1969-11-15", "1971-02-01", 5},
    {DateUnit::Quarter, "2020-01-01", "2020-03-31", 0},
    {DateUnit::Quarter, "0000-12-31", "0001-01-01", 1},
    {DateUnit::Month, "2020-01-31", "2020-02-01", 1},
    {DateUnit::Month, "2020-02-01", "2020-01-31", -1},
    {DateUnit::Month, "2020-01-01", "2020-01-31", 0},
    {DateUnit::Month, "2000-02-29", "2001-02-28", 12},
    {DateUnit::Month, "1969-12-31", "1970-01-01", 1},
    {DateUnit::Month, "1600-03-15", "2024-02-29", 5087},
    {DateUnit::Day, "2020-01-02", "2020-01-01", -1},
    {DateUnit::Day, "2020-02-28", "2020-03-01", 2},
    {DateUnit::Day, "2019-02-28", "2019-03-01", 1},
    {DateUnit::Day, "1900-02-28", "1900-03-01", 1},
    {DateUnit::Day, "0000-01-01", "9999-12-31", 3652424},
    {DateUnit::Day, "1969-12-31", "1970-01-01", 1},
    {DateUnit::Hour, "2020-01-01", "2020-01-03", 48},
    {DateUnit::Hour, "1960-01-01", "1950-01-01", -87648},
    {DateUnit::Minute, "1960-01-01", "1960-01-02", 1440},
    {DateUnit::Minute, "1969-12-31", "1970-01-01", 1440},
    {DateUnit::Second, "2020-01-02", "2020-01-01", -86400},
    {DateUnit::Second, "0000-01-01", "9999-12-31", 315569433600},
    {DateUnit::Week, "2020-01-01 23:00:00", "2020-01-08 01:00:00", 1},
    {DateUnit::Week, "2020-01-01 01:00:00", "2020-01-07 23:00:00", 0},
    {DateUnit::Week, "1969-12-25 01:00:00", "1970-01-01 00:00:00", 1},
    {DateUnit::Week, "1970-01-08 00:00:00", "1970-01-01 23:59:59.999999", -1},
    {DateUnit::Year, "2020-12-31 23:59:59.999999", "2021-01-01 00:00:00", 1},
    {DateUnit::Year, "2021-01-01 00:00:00", "2020-12-31 23:59:59.999999", -1},
    {DateUnit::Quarter, "1969-12-31 23:59:59.999999", "1970-01-01 00:00:00", 1},
    {DateUnit::Month, "1969-12-31 23:59:59", "1970-01-01 00:00:00", 1},
    {DateUnit::Month, "2020-03-31 12:00:00", "2020-02-29 12:00:00", -1},
    {DateUnit::Day, "2020-01-01 23:59:59", "2020-01-02 00:00:00", 1},
    {DateUnit::Day, "1969-12-31 23:59:59", "1970-01-01 00:00:00", 1},
    {DateUnit::Day, "2020-01-01 00:00:00", "2020-01-01 23:59:59.999999", 0},
    {DateUnit::Day, "1969-12-31 00:00:00.000001", "1969-12-30 23:59:59.999999", -1},
    {DateUnit::Hour, "1969-12-31 23:30:00", "1970-01-01 00:30:00", 1},
    {DateUnit::Hour, "1969-12-31 22:30:00", "1969-12-31 23:30:00", 1},
    {DateUnit::Hour, "1969-12-31 23:00:00", "1969-12-31 22:59:59", -1},
    {DateUnit::Hour, "1970-01-01 00:00:00", "1969-12-31 23:59:59", -1},
    {DateUnit::Hour, "2020-01-01 10:59:59", "2020-01-01 11:00:00", 1},
    {DateUnit::Hour, "2020-01-01 10:00:00", "2020-01-01 10:59:59.999999", 0},
    {DateUnit::Hour, "0001-01-01 00:30:00", "0001-01-01 01:10:00", 1},
    {DateUnit::Hour, "0000-01-01 00:00:00", "9999-12-31 23:59:59.999999", 87658199},
    {DateUnit::Minute, "1969-12-31 23:59:30", "1970-01-01 00:00:30", 1},
    {DateUnit::Minute, "1900-01-01 00:00:59.999999", "1900-01-01 00:01:00", 1},
    {DateUnit::Minute, "1950-06-01 12:00:30", "1950-06-01 11:59:30", -1},
    {DateUnit::Minute, "2024-02-29 23:59:00", "2024-03-01 00:00:59", 1},
    {DateUnit::Second, "1969-12-31 23:59:59.5", "1970-01-01 00:00:00.5", 1},
    {DateUnit::Second, "2020-01-01 10:59:59.9", "2020-01-01 11:00:00.1", 1},
    {DateUnit::Second, "1969-12-31 23:59:59.999999", "1969-12-31 23:59:59.000001", 0},
    {DateUnit::Second, "1969-12-31 23:59:58.999999", "1969-12-31 23:59:59.000001", 1},
    {DateUnit::Second, "1970-01-01 00:00:00.000001", "1969-12-31 23:59:59.999999", -1},
    {DateUnit::Second, "1970-01-01 00:00:00.999999", "1970-01-01 00:00:00", 0},
    {DateUnit::Second, "0000-01-01 00:00:00", "9999-12-31 23:59:59.999999", 315569519999},
    {DateUnit::Second, "1812-05-06 07:08:09.25", "1812-05-06 07:08:10.75", 1},
  };
  for (const Diff& c : kCases) {
    const bool ts = std::strlen(c.a) > 10;
    INFO(c.a << " -> " << c.b << " unit " << static_cast<int>(c.unit));
    const int64_t a = parse_value(c.a, ts), b = parse_value(c.b, ts);
    CHECK(date_diff(c.unit, a, b, ts) == c.expected);
    if (!ts) CHECK(date_diff(c.unit, a * 86400000000LL, b * 86400000000LL, true) == c.expected);  // midnights
  }
}

TEST_CASE("strftime: names, shorthands, percent signs and other bytes", "[datetime][strftime]") {
  const char* const kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
  const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                 "July",    "August",   "September", "October", "November", "December"};
  const int64_t sunday = -4;  // 1969-12-28
  for (int i = 0; i < 7; ++i) {
    CHECK(strftime_of(sunday + i, false, "%A") == kDays[i]);
    CHECK(strftime_of(sunday + i, false, "%a") == std::string(kDays[i], 3));
  }
  for (unsigned m = 1; m <= 12; ++m) {
    const int64_t first = days_from_civil(2023, m, 1);
    CHECK(strftime_of(first, false, "%B") == kMonths[m - 1]);
    CHECK(strftime_of(first, false, "%b") == std::string(kMonths[m - 1], 3));
    CHECK(strftime_of(first, false, "%m") == (m < 10 ? "0" : "") + std::to_string(m));
  }
  int64_t t = 0;
  REQUIRE(parse_timestamp("2021-03-04 05:06:07.890123", 26, &t));
  CHECK(strftime_of(t, true, "%F") == "2021-03-04");
  CHECK(strftime_of(t, true, "%T") == "05:06:07");
  CHECK(strftime_of(t, true, "%FT%T") == "2021-03-04T05:06:07");
  CHECK(strftime_of(t, true, "%F %T") == strftime_of(t, true, "%Y-%m-%d %H:%M:%S"));
  CHECK(strftime_of(t, true, "%d/%m/%Y, %H.%M") == "04/03/2021, 05.06");
  CHECK(strftime_of(t, true, "100%% at %H%%") == "100% at 05%");
  CHECK(strftime_of(t, true, "%%Y %%%Y") == "%Y %2021");
  CHECK(strftime_of(t, true, "day %j of \xc3\xa9t\xc3\xa9") == "day 063 of \xc3\xa9t\xc3\xa9");
  CHECK(strftime_of(t, true, "") == "");
  CHECK(strftime_of(t, true, "plain") == "plain");
  // A date has no time of day.
  CHECK(strftime_of(t / 86400000000LL, false, "%F %T") == "2021-03-04 00:00:00");
  CHECK(strftime_of(t / 86400000000LL, false, "%H%M%S") == "000000");
  // Bytes of a format that is not ok are copied as they are.
  CHECK(strftime_of(t, true, "%q %Y %") == "%q 2021 %");
  // Years after 9999 print all their digits, years before 0 a '-' and no padding (as DuckDB does).
  CHECK(strftime_of(days_from_civil(12345, 6, 7), false, "%F") == "12345-06-07");
  CHECK(strftime_of(days_from_civil(-5, 6, 7), false, "%F") == "-5-06-07");
  CHECK(strftime_of(days_from_civil(0, 6, 7), false, "%F") == "0000-06-07");
  CHECK(strftime_of(days_from_civil(7, 6, 7), false, "%F") == "0007-06-07");
}

TEST_CASE("strftime_format_ok finds the first bad specifier", "[datetime][strftime]") {
  struct Case {
    const char* fmt;
    bool ok;
    uint32_t bad_at;
  };
  const Case kCases[] = {
      {"", true, 0},
      {"plain text", true, 0},
      {"%Y-%m-%d %H:%M:%S", true, 0},
      {"%j%a%A%b%B%F%T%%", true, 0},
      {"%%Y", true, 0},
      {"100%%", true, 0},
      {"%", false, 0},
      {"abc%", false, 3},
      {"%Y%", false, 2},
      {"%%%", false, 2},
      {"%q", false, 0},
      {"%Y %E", false, 3},
      {"%y", false, 0},
      {"%Y-%m-%e %x", false, 6},
      {"%%%%%z", false, 4},
      {"% Y", false, 0},
      {"%%%Z%q", false, 2},
  };
  for (const Case& c : kCases) {
    INFO("format '" << c.fmt << "'");
    uint32_t bad_at = 12345;
    CHECK(strftime_format_ok(c.fmt, static_cast<uint32_t>(std::strlen(c.fmt)), &bad_at) == c.ok);
    CHECK(bad_at == (c.ok ? 12345u : c.bad_at));
    CHECK(strftime_format_ok(c.fmt, static_cast<uint32_t>(std::strlen(c.fmt)), nullptr) == c.ok);
  }
  // Exactly the 14 specifier bytes are accepted.
  const std::string kAccepted = "YmdHMSjaAbBFT%";
  for (int b = 0; b < 256; ++b) {
    const char fmt[2] = {'%', static_cast<char>(b)};
    const bool accepted = b != 0 && kAccepted.find(static_cast<char>(b)) != std::string::npos;
    CHECK(strftime_format_ok(fmt, 2, nullptr) == accepted);
  }
  // The length bounds the format: a '%' at its end is bad even where a specifier byte follows.
  CHECK(!strftime_format_ok("%Y", 1, nullptr));
}

TEST_CASE("strftime_length_bound bounds what format_strftime writes", "[datetime][strftime]") {
  auto bound = [](const std::string& fmt) {
    return strftime_length_bound(fmt.data(), static_cast<uint32_t>(fmt.size()));
  };
  CHECK(bound("") == 0);
  CHECK(bound("abc") == 3);
  CHECK(bound("%m%d%H%M%S") == 10);
  CHECK(bound("%j%a%b") == 9);
  CHECK(bound("%A%B") == 18);
  CHECK(bound("%T") == 8);
  CHECK(bound("%%") == 1);
  CHECK(bound("%Y") == 11);  // any int year with its sign
  CHECK(bound("%F") == 17);
  CHECK(bound("%q%") == 3);  // a bad format's bytes as they are
  // The widest names reach the bound.
  CHECK(strftime_of(days_from_civil(2025, 9, 3), false, "%A%B") == "WednesdaySeptember");
  // Random formats over random values: never past the bound, no byte written past the length.
  std::mt19937_64 rng(7);
  const std::string kPieces[] = {"%Y", "%m", "%d", "%H", "%M", "%S", "%j", "%a", "%A", "%b",
                                 "%B", "%F", "%T", "%%", "-",  " ",  "x",  "%q", "%"};
  const int64_t kDay = 86400000000LL;
  for (int i = 0; i < 5000; ++i) {
    std::string fmt;
    for (int k = static_cast<int>(rng() % 12); k > 0; --k) fmt += kPieces[rng() % 19];
    const bool ts = rng() % 2 == 0;
    const int64_t days = static_cast<int64_t>(rng() % 4000000) - 1000000;  // years -768 to 11982
    const int64_t v = ts ? days * kDay + static_cast<int64_t>(rng() % kDay) : days;
    char out[512];
    std::memset(out, '#', sizeof out);
    const uint32_t n = format_strftime(v, ts, fmt.data(), static_cast<uint32_t>(fmt.size()), out);
    INFO("format '" << fmt << "' value " << v);
    REQUIRE(n <= bound(fmt));
    REQUIRE(out[n] == '#');
  }
}

TEST_CASE("date_diff before year 0 divides quarters as DuckDB does", "[datetime][date_diff]") {
  // DuckDB counts quarters as (12 * year + month - 1) / 3, truncated: before year 0 a
  // quarter's boundaries move. Expected values are DuckDB 1.5's.
  CHECK(date_diff(DateUnit::Quarter, days_from_civil(-1, 1, 1), days_from_civil(-1, 12, 1), false) == 4);
  CHECK(date_diff(DateUnit::Quarter, days_from_civil(-1, 9, 30), days_from_civil(-1, 10, 1), false) == 0);
  CHECK(date_diff(DateUnit::Quarter, days_from_civil(-1, 10, 1), days_from_civil(0, 1, 1), false) == 1);
  CHECK(date_diff(DateUnit::Month, days_from_civil(-1, 12, 31), days_from_civil(0, 1, 1), false) == 1);
  CHECK(date_diff(DateUnit::Year, days_from_civil(-1, 12, 31), days_from_civil(0, 1, 1), false) == 1);
}

TEST_CASE("date_diff against counted boundaries", "[datetime][date_diff]") {
  // Boundaries counted from the parts and truncations, over years 0000 ... 9999.
  std::mt19937_64 rng(11);
  const int64_t kDay = 86400000000LL;
  const int64_t kScales[] = {1000000, 100000000, 10000000000, kDay * 40, kDay * 4000, kDay * 400000};
  for (int i = 0; i < 20000; ++i) {
    const int64_t a = static_cast<int64_t>(rng() % (3652425 * static_cast<uint64_t>(kDay))) - 719528 * kDay;
    const int64_t scale = kScales[i % 6];
    const int64_t b = a + static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * scale)) - scale;
    INFO("timestamps " << a << " " << b);
    const int64_t ya = date_part(a, true, DatePart::Year), yb = date_part(b, true, DatePart::Year);
    const int64_t ma = ya * 12 + date_part(a, true, DatePart::Month);
    const int64_t mb = yb * 12 + date_part(b, true, DatePart::Month);
    const int64_t da = date_part(a, true, DatePart::Date), db = date_part(b, true, DatePart::Date);
    CHECK(date_diff(DateUnit::Year, a, b, true) == yb - ya);
    CHECK(date_diff(DateUnit::Month, a, b, true) == mb - ma);
    CHECK(date_diff(DateUnit::Quarter, a, b, true) == (mb - 1) / 3 - (ma - 1) / 3);
    CHECK(date_diff(DateUnit::Day, a, b, true) == db - da);
    CHECK(date_diff(DateUnit::Week, a, b, true) == (db - da) / 7);
    for (DateUnit u : {DateUnit::Hour, DateUnit::Minute, DateUnit::Second}) {
      const int64_t step = u == DateUnit::Hour ? 3600000000LL : u == DateUnit::Minute ? 60000000 : 1000000;
      CHECK(date_diff(u, a, b, true) == (date_trunc(b, true, u) - date_trunc(a, true, u)) / step);
      CHECK(date_diff(u, da, db, false) == (db - da) * (kDay / step));
    }
    for (int i_unit = 0; i_unit < 8; ++i_unit) {
      const auto u = static_cast<DateUnit>(i_unit);
      CHECK(date_diff(u, a, b, true) == -date_diff(u, b, a, true));
    }
  }
}
