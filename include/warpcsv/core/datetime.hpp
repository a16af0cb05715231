// Parts, truncations, differences and strftime text of dates (days since
// 1970-01-01) and timestamps (microseconds since 1970-01-01 UTC), as DuckDB
// names them: year(t), dow(t), date_trunc('month', t), date_diff('day', a, b),
// strftime(t, '%Y-%m-%d'), ... . The same code runs on the CPU and the GPU
// (core/eval.hpp's DatePart and DateTrunc ops).
#pragma once
#include <cstdint>

#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/parse.hpp"
#include "warpcsv/core/value_text.hpp"

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

WCSV_HD inline int64_t floor_div(int64_t a, int64_t b) { return (a - floor_mod(a, b)) / b; }

// Microseconds in an hour, a minute or a second.
WCSV_HD inline int64_t micros_per(DateUnit unit) {
  return unit == DateUnit::Hour ? 3600 * kMicrosPerSecond
         : unit == DateUnit::Minute ? 60 * kMicrosPerSecond
                                    : kMicrosPerSecond;
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
      const int64_t step = detail::micros_per(unit);
      return days * detail::kMicrosPerDay + micros_of_day / step * step;
    }
  }
  return is_timestamp ? day * detail::kMicrosPerDay : day;
}

namespace detail {

// The index of a value's `unit` on a line of such units (the year, the month
// counted from year 0, the hour since the epoch, ...): date_diff's boundaries.
WCSV_HD inline int64_t unit_ordinal(int64_t v, bool is_timestamp, DateUnit unit) {
  int64_t days = v, micros_of_day = 0;
  if (is_timestamp) split_timestamp(v, &days, &micros_of_day);
  int y;
  unsigned m, d;
  switch (unit) {
    case DateUnit::Year:
    case DateUnit::Quarter:
    case DateUnit::Month:
      days_to_civil(days, &y, &m, &d);
      if (unit == DateUnit::Year) return y;
      // DuckDB divides the month count truncating, which shifts quarters before year 0.
      if (unit == DateUnit::Quarter) return (int64_t{y} * 12 + (m - 1)) / 3;
      return int64_t{y} * 12 + (m - 1);
    case DateUnit::Week:
    case DateUnit::Day: return days;
    case DateUnit::Hour:
    case DateUnit::Minute:
    case DateUnit::Second: break;
  }
  const int64_t step = micros_per(unit);
  return is_timestamp ? floor_div(v, step) : days * (kMicrosPerDay / step);
}

}  // namespace detail

// DuckDB's date_diff(unit, a, b): the `unit` boundaries crossed from a to b
// (negative when b is earlier), from the calendar dates for year ... day and
// from the epoch, floored, for hour ... second. A week is DuckDB's whole
// weeks between the dates: their day difference / 7, truncated toward zero.
WCSV_HD inline int64_t date_diff(DateUnit unit, int64_t a, int64_t b, bool is_timestamp) {
  const int64_t diff =
      detail::unit_ordinal(b, is_timestamp, unit) - detail::unit_ordinal(a, is_timestamp, unit);
  return unit == DateUnit::Week ? diff / 7 : diff;
}

namespace detail {

// The widest text of a strftime specifier `c` (what follows the '%'), 0 for
// one that is not supported. A year is an int: at most 11 bytes with its sign.
WCSV_HD inline uint32_t strftime_spec_width(char c) {
  switch (c) {
    case 'Y': return 11;
    case 'm': case 'd': case 'H': case 'M': case 'S': return 2;
    case 'j': case 'a': case 'b': return 3;
    case 'A': case 'B': return 9;  // Wednesday, September
    case 'F': return 11 + 6;       // year-mm-dd
    case 'T': return 8;            // hh:mm:ss
    case '%': return 1;
    default: return 0;
  }
}

// strftime_spec_width of a supported specifier starting at fmt[i], else 0.
WCSV_HD inline uint32_t spec_width_at(const char* fmt, uint32_t len, uint32_t i) {
  return fmt[i] == '%' && i + 1 < len ? strftime_spec_width(fmt[i + 1]) : 0;
}

// A year as DuckDB's strftime writes it: 4 digits for 0000 ... 9999, else
// all its digits with a '-' before the years before 0.
WCSV_HD inline uint32_t write_year(int64_t y, char* out) {
  if (y >= 0) return write_padded(static_cast<uint64_t>(y), 4, out);
  out[0] = '-';
  return 1 + write_padded(static_cast<uint64_t>(-y), 1, out + 1);
}

// English names in 9-byte slots padded with spaces; the first three letters
// are the abbreviation (%a, %b).
WCSV_HD inline uint32_t write_name(const char* slots, int64_t i, bool full, char* out) {
  const char* name = slots + 9 * i;
  uint32_t n = 0;
  for (; n < (full ? 9u : 3u) && name[n] != ' '; ++n) out[n] = name[n];
  return n;
}

// A date or timestamp taken apart once for every specifier.
struct CivilTime {
  int64_t days, micros_of_day;
  int y;
  unsigned m, d;
};

// One field: any specifier but the shorthands %F and %T.
WCSV_HD inline uint32_t write_field(const CivilTime& t, char c, char* out) {
  const int64_t secs = t.micros_of_day / kMicrosPerSecond;
  const char* kDays = "Sunday   Monday   Tuesday  WednesdayThursday Friday   Saturday ";
  const char* kMonths =
      "January  February March    April    May      June     "
      "July     August   SeptemberOctober  November December ";
  switch (c) {
    case 'Y': return write_year(t.y, out);
    case 'm': return write_padded(t.m, 2, out);
    case 'd': return write_padded(t.d, 2, out);
    case 'H': return write_padded(static_cast<uint64_t>(secs / 3600), 2, out);
    case 'M': return write_padded(static_cast<uint64_t>(secs / 60 % 60), 2, out);
    case 'S': return write_padded(static_cast<uint64_t>(secs % 60), 2, out);
    case 'j': return write_padded(static_cast<uint64_t>(t.days - days_from_civil(t.y, 1, 1) + 1), 3, out);
    case 'a':
    case 'A': return write_name(kDays, weekday_of(t.days), c == 'A', out);
    case 'b':
    case 'B': return write_name(kMonths, t.m - 1, c == 'B', out);
    default: break;  // %%
  }
  out[0] = c;
  return 1;
}

// A specifier; %F is %Y-%m-%d and %T is %H:%M:%S.
WCSV_HD inline uint32_t write_spec(const CivilTime& t, char c, char* out) {
  if (c != 'F' && c != 'T') return write_field(t, c, out);
  const char* parts = c == 'F' ? "Y-m-d" : "H:M:S";  // fields at even places, separators between
  uint32_t n = 0;
  for (int k = 0; k < 5; ++k) {
    if (k % 2 == 0) n += write_field(t, parts[k], out + n);
    else out[n++] = parts[k];
  }
  return n;
}

}  // namespace detail

// Whether every '%' of a strftime format is followed by one of
// Y m d H M S j a A b B F T %; if not, *bad_at (when given) is the offset of
// the first '%' that is not.
WCSV_HD inline bool strftime_format_ok(const char* fmt, uint32_t len, uint32_t* bad_at) {
  for (uint32_t i = 0; i < len; ++i) {
    if (fmt[i] != '%') continue;
    if (detail::spec_width_at(fmt, len, i) == 0) {
      if (bad_at) *bad_at = i;
      return false;
    }
    ++i;
  }
  return true;
}

// The most bytes format_strftime writes for `fmt` and any value (a format
// that is not ok counts its bad specifiers as the bytes they are).
WCSV_HD inline uint32_t strftime_length_bound(const char* fmt, uint32_t len) {
  uint32_t bound = 0;
  for (uint32_t i = 0; i < len; ++i) {
    const uint32_t width = detail::spec_width_at(fmt, len, i);
    bound += width != 0 ? width : 1;
    if (width != 0) ++i;
  }
  return bound;
}

// Writes the strftime text of a date (`is_timestamp` false: days) or a
// timestamp (microseconds) to `out`, at most strftime_length_bound bytes and
// no NUL; returns its length. A date's %H, %M and %S are 00. Bytes of a
// format that is not ok are copied as they are.
WCSV_HD inline uint32_t format_strftime(int64_t v, bool is_timestamp, const char* fmt, uint32_t len,
                                        char* out) {
  detail::CivilTime t{v, 0, 0, 0, 0};
  if (is_timestamp) split_timestamp(v, &t.days, &t.micros_of_day);
  days_to_civil(t.days, &t.y, &t.m, &t.d);
  uint32_t n = 0;
  for (uint32_t i = 0; i < len; ++i) {
    if (detail::spec_width_at(fmt, len, i) != 0) {
      n += detail::write_spec(t, fmt[++i], out + n);
    } else {
      out[n++] = fmt[i];
    }
  }
  return n;
}

}  // namespace warpcsv
