// Date parts and truncations (core/datetime.hpp) against a calendar walked
// one day at a time from 1900-01-01 (a Monday), which shares no arithmetic
// with the code under test; and through the pipeline language, with its
// type and usage errors.
#include <cstdint>
#include <random>
#include <string>

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
