// Parts and truncations of dates (days since 1970-01-01) and timestamps
// (microseconds since 1970-01-01 UTC), as DuckDB names them: year(t),
// dow(t), date_trunc('month', t), ... . The same code runs on the CPU and the
// GPU (core/eval.hpp's DatePart and DateTrunc ops).
#pragma once
#include <cstdint>

#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/parse.hpp"

namespace warpcsv {

enum class DatePart : int32_t {
  Year,
  Quarter,
  Month,
  Day,
  Hour,
  Minute,
  Second,
  Dow,     // 0 = Sunday ... 6 = Saturday (DuckDB's dayofweek)
  Isodow,  // 1 = Monday ... 7 = Sunday
  Doy,     // 1 ... 366
  Week,    // ISO 8601 week: 1 ... 53, weeks from Monday, week 1 holds the year's first Thursday
  Epoch,   // seconds since 1970-01-01: an int for a date, a float for a timestamp
  Date,    // the date of a timestamp
};

enum class DateUnit : int32_t { Year, Quarter, Month, Week, Day, Hour, Minute, Second };

namespace detail {

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerDay = 86400 * kMicrosPerSecond;

WCSV_HD inline int64_t floor_mod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

// 0 = Sunday for a day count (1970-01-01 was a Thursday).
WCSV_HD inline int64_t weekday_of(int64_t days) { return floor_mod(days + 4, 7); }

// ISO 8601 week of a day: the week of its Thursday, counted in that Thursday's year.
WCSV_HD inline int64_t iso_week_of(int64_t days) {
  const int64_t isodow = (weekday_of(days) + 6) % 7 + 1;
  const int64_t thursday = days + 4 - isodow;
  int y;
  unsigned m, d;
  days_to_civil(thursday, &y, &m, &d);
  return (thursday - days_from_civil(y, 1, 1)) / 7 + 1;
}

}  // namespace detail

// Part `p` of a date (`is_timestamp` false: days) or timestamp (microseconds):
// an integer, Date a day count (a timestamp's epoch is timestamp_epoch's).
WCSV_HD inline int64_t date_part(int64_t v, bool is_timestamp, DatePart p) {
  int64_t days = v, micros_of_day = 0;
  if (is_timestamp) split_timestamp(v, &days, &micros_of_day);
  int y;
  unsigned m, d;
  switch (p) {
    case DatePart::Hour: return micros_of_day / (3600 * detail::kMicrosPerSecond);
    case DatePart::Minute: return micros_of_day / (60 * detail::kMicrosPerSecond) % 60;
    case DatePart::Second: return micros_of_day / detail::kMicrosPerSecond % 60;
    case DatePart::Dow: return detail::weekday_of(days);
    case DatePart::Isodow: return (detail::weekday_of(days) + 6) % 7 + 1;
    case DatePart::Week: return detail::iso_week_of(days);
    case DatePart::Epoch: return days * 86400;  // a date's
    case DatePart::Date: return days;
    default: break;
  }
  days_to_civil(days, &y, &m, &d);
  switch (p) {
    case DatePart::Year: return y;
    case DatePart::Quarter: return (m - 1) / 3 + 1;
    case DatePart::Month: return m;
    case DatePart::Day: return d;
    case DatePart::Doy: return days - days_from_civil(y, 1, 1) + 1;
    default: return 0;
  }
}

// A timestamp's seconds since the epoch, with its microseconds.
WCSV_HD inline double timestamp_epoch(int64_t micros) {
  return static_cast<double>(micros) / static_cast<double>(detail::kMicrosPerSecond);
}

// A date or timestamp truncated to the start of its `unit` (a date is left
// as it is by the units below a day).
WCSV_HD inline int64_t date_trunc(int64_t v, bool is_timestamp, DateUnit unit) {
  int64_t days = v, micros_of_day = 0;
  if (is_timestamp) split_timestamp(v, &days, &micros_of_day);
  int64_t day = days;
  int y;
  unsigned m, d;
  switch (unit) {
    case DateUnit::Year:
    case DateUnit::Quarter:
    case DateUnit::Month:
      days_to_civil(days, &y, &m, &d);
      if (unit == DateUnit::Year) m = 1;
      if (unit == DateUnit::Quarter) m = (m - 1) / 3 * 3 + 1;
      day = days_from_civil(y, m, 1);
      break;
    case DateUnit::Week: day = days - (detail::weekday_of(days) + 6) % 7; break;  // back to Monday
    case DateUnit::Day: break;
    case DateUnit::Hour:
    case DateUnit::Minute:
    case DateUnit::Second: {
      if (!is_timestamp) return v;
      const int64_t step = unit == DateUnit::Hour     ? 3600 * detail::kMicrosPerSecond
                           : unit == DateUnit::Minute ? 60 * detail::kMicrosPerSecond
                                                      : detail::kMicrosPerSecond;
      return days * detail::kMicrosPerDay + micros_of_day / step * step;
    }
  }
  return is_timestamp ? day * detail::kMicrosPerDay : day;
}

}  // namespace warpcsv
