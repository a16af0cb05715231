#!/usr/bin/env python3
"""Writes the sample files in data/ (deterministic: same bytes on every run).

sales_sample.csv: 200 orders with quoted names (commas, a doubled quote, a line
break inside quotes), exact decimals, empty (null) fields and ISO dates.
weather.csv: daily readings of four stations with negative and missing values.
"""
import datetime
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def q(s):
    """RFC 4180 quoting, only where needed."""
    if any(c in s for c in ',"\n\r') or s != s.strip():
        return '"' + s.replace('"', '""') + '"'
    return s


def sales():
    rnd = random.Random(20240601)
    customers = [
        "Acme Corp", "Smith, Jones & Co", 'The "Best" Bakery', "Northwind Traders",
        "Harbor View\nHoldings", "Globex", "Initech", "Umbrella, Ltd", "Stark Industries",
        "Wayne Enterprises", "Hooli", "Vandelay Imports",
    ]
    regions = ["north", "south", "east", "west"]
    products = {"widget": "4.99", "gadget": "19.95", "gizmo": "7.50", "doohickey": "0.85",
                "sprocket": "12.00"}
    statuses = ["shipped", "shipped", "shipped", "pending", "returned"]
    start = datetime.date(2024, 1, 1)
    rows = ["order_id,order_date,region,customer,product,quantity,unit_price,amount,discount,status"]
    for i in range(1, 201):
        day = start + datetime.timedelta(days=rnd.randrange(0, 182))
        product = rnd.choice(sorted(products))
        price = products[product]
        qty = rnd.randint(1, 40)
        cents = int(price.replace(".", "")) * qty
        status = rnd.choice(statuses)
        if status == "returned":
            cents = -cents
        amount = "%s%d.%02d" % ("-" if cents < 0 else "", abs(cents) // 100, abs(cents) % 100)
        discount = "" if rnd.random() < 0.6 else "0.%02d" % rnd.choice([5, 10, 15, 20])
        region = "" if i % 67 == 0 else rnd.choice(regions)  # a few unknown regions
        rows.append(",".join([
            str(1000 + i), day.isoformat(), region, q(rnd.choice(customers)), product,
            str(qty), price, amount, discount, status]))
    return "\n".join(rows) + "\n"


def weather():
    rnd = random.Random(7)
    stations = {"oslo": -4.0, "lisbon": 11.5, "denver": 0.5, "singapore": 27.0}
    conditions = ["clear", "cloudy", "rain", "snow", "fog"]
    rows = ["station,date,temp_c,precip_mm,wind_kmh,condition"]
    for day in range(60):
        date = (datetime.date(2024, 1, 1) + datetime.timedelta(days=day)).isoformat()
        for name, base in stations.items():
            temp = base + rnd.uniform(-6, 6) + day * 0.05
            precip = "" if rnd.random() < 0.08 else "%.1f" % max(0.0, rnd.gauss(2, 3))
            cond = rnd.choice(conditions if temp < 2 else conditions[:3] + conditions[4:])
            rows.append("%s,%s,%.1f,%s,%d,%s" % (name, date, temp, precip, rnd.randint(0, 60), cond))
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    for name, text in (("sales_sample.csv", sales()), ("weather.csv", weather())):
        with open(os.path.join(HERE, name), "w", newline="") as f:
            f.write(text)
