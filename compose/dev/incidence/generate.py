"""Histories with known censoring and competing risks for the cumulative incidence goldens.

Writes, for each data set, the listings' event histories (what the Go test ingests) and their
latest lifetimes (what R and lifelines fit), then the reference curves per group: R's survival
(survfit with a multi-state status: point estimates and numbers at risk) and, for a data set
without booking/expiry ties, lifelines' AalenJohansenFitter (its variance and 95% band).
Run by compose/dev/incidence-goldens; see docs/time-to-book.md.
"""
import csv
import json
import math
import random
import subprocess
import sys
import warnings
from datetime import datetime, timedelta, timezone

KST = timezone(timedelta(hours=9))
AS_OF = datetime(2026, 5, 1, 12, 0, tzinfo=KST)
COURSES = {  # mean hours to a booking, and the chance a listing is ever wanted
    "Alpha CC": (10.0, 0.85),
    "Bravo GC": (60.0, 0.6),
    "Charlie 골프클럽": (200.0, 0.4),
}
LEADS = [(0, "< 1 d"), (1, "1–7 d"), (7, "7–14 d"), (14, "> 14 d")]


def lead_bucket(lead):
    name = LEADS[0][1]
    for days, n in LEADS:
        if lead >= timedelta(days=days):
            name = n
    return name


def generate(rng, n, grid):
    """n listings. grid: the resolution in seconds of every instant (1800 makes ties of every kind,
    1 makes booking/expiry ties rare: the caller drops them)."""
    out, keys = [], set()
    def snap(t):
        s = int(t.timestamp()) // grid * grid
        return datetime.fromtimestamp(s, KST)
    while len(out) < n:
        course = rng.choice(sorted(COURSES))
        mean_h, wanted = COURSES[course]
        play = AS_OF.date() + timedelta(days=rng.randint(-10, 20))
        tee = snap(datetime(play.year, play.month, play.day, 5, 0, tzinfo=KST) + timedelta(minutes=rng.randint(0, 11 * 60)))
        tee = tee.replace(second=0)  # a tee time is HH:MM
        if (course, tee) in keys:  # one listing per course and tee time (its listing key)
            continue
        keys.add((course, tee))
        lead = timedelta(hours=math.exp(rng.uniform(math.log(2), math.log(24 * 25))))
        opened = snap(tee - lead)
        if opened >= AS_OF or opened >= tee:
            continue
        events = []
        reopen = rng.random() < 0.08
        if reopen:  # an earlier lifetime, booked then cancelled: only the latest one counts
            first = opened
            booked = first + timedelta(seconds=grid * rng.randint(1, 20))
            opened = booked + timedelta(seconds=grid * rng.randint(1, 20))
            if opened >= AS_OF or opened >= tee:
                continue
            events += [("opened", first, None), ("closed", booked, "booked")]
        events.append(("opened", opened, None))
        b = math.inf
        if rng.random() < wanted:
            b = max(grid, round(rng.expovariate(1 / (mean_h * 3600)) / grid) * grid)
        e = (tee - opened).total_seconds()
        c = (AS_OF - opened).total_seconds()
        if min(b, e) <= c:
            if b <= e:
                status, t = "booked", b
                events.append(("closed", opened + timedelta(seconds=b), "booked"))
            else:
                status, t = "expired", e
        else:
            status, t = "open", c
        out.append({"course": course, "play_date": play.isoformat(), "tee_time": tee.strftime("%H:%M"),
                    "weekday": play.isoweekday() % 7, "lead": lead_bucket(tee - opened),
                    "status": status, "time": t,
                    "events": [{"type": k, "at": at.isoformat(), "reason": r} for k, at, r in events]})
    return out


def without_booking_expiry_ties(ls):
    kinds = {}
    for l in ls:
        if l["status"] != "open":
            kinds.setdefault(l["time"], set()).add(l["status"])
    return [l for l in ls if l["status"] == "open" or len(kinds[l["time"]]) == 1]


def groups(ls):
    """(kind, course, weekday, lead) -> listings, as store.Summary groups them."""
    gs = {("overall", "", -1, ""): ls}
    for l in ls:
        gs.setdefault(("course", l["course"], -1, ""), []).append(l)
        gs.setdefault(("course_weekday", l["course"], l["weekday"], ""), []).append(l)
        gs.setdefault(("lead", "", -1, l["lead"]), []).append(l)
    return gs


def run_r(ls, work):
    path = f"{work}/lifetimes.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "course", "weekday", "lead", "time", "status"])
        for i, l in enumerate(ls):
            w.writerow([i, l["course"], l["weekday"], l["lead"], repr(float(l["time"])), l["status"]])
    out = subprocess.run(["Rscript", sys.path[0] + "/survfit.R", path], check=True, capture_output=True, text=True).stdout
    res = {}
    for row in csv.DictReader(out.splitlines()):
        k = (row["kind"], row["course"], int(row["weekday"]), row["lead"])
        res.setdefault(k, []).append(row)
    return res


def run_lifelines(ls):
    from lifelines import AalenJohansenFitter
    code = {"open": 0, "booked": 1, "expired": 2}
    aj = AalenJohansenFitter(calculate_variance=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a jitter warning would mean ties slipped through
        aj.fit([float(l["time"]) for l in ls], [code[l["status"]] for l in ls], event_of_interest=1)
    ci = aj.confidence_interval_
    out = {}
    for t in aj.cumulative_density_.index:
        v = float(aj.variance_.loc[t])
        a, b = (float(x) for x in ci.loc[t])
        f = float(aj.cumulative_density_.loc[t].iloc[0])
        out[float(t)] = {"cif": f, "variance": none_nan(v), "lower": none_nan(min(a, b)), "upper": none_nan(max(a, b))}
    return out


def none_nan(x):
    return None if x is None or math.isnan(x) or math.isinf(x) else x


def golden(name, ls, work, band):
    r = run_r(ls, work)
    out = {"as_of": AS_OF.isoformat(), "listings": [{k: l[k] for k in ("course", "play_date", "tee_time", "status", "time", "events")} for l in ls],
           "groups": []}
    for k, members in sorted(groups(ls).items()):
        ll = run_lifelines(members) if band else {}
        pts = []
        for row in r[k]:
            t = float(row["time"])
            p = {"t": t, "n_risk": int(row["n_risk"]), "n_booked": int(row["n_booked"]), "n_expired": int(row["n_expired"]),
                 "n_censor": int(row["n_censor"]), "cif": float(row["booked"]), "cif_expired": float(row["expired"])}
            if band:
                L = ll[t]
                if abs(L["cif"] - p["cif"]) > 1e-9:
                    raise SystemExit(f"{name} {k} t={t}: lifelines CIF {L['cif']} differs from R's {p['cif']}")
                p.update(variance=L["variance"], lower=L["lower"], upper=L["upper"])
            pts.append(p)
        out["groups"].append({"kind": k[0], "course": k[1], "weekday": k[2], "lead": k[3], "points": pts})
    return out


def compact(g):
    """The golden as JSON with one listing and one point per line (diffable, a third of indent's size)."""
    j = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    out = ['{"as_of":' + j(g["as_of"]) + ',"listings":[\n' + ",\n".join(j(l) for l in g["listings"]) + '\n],"groups":[\n']
    gs = []
    for gr in g["groups"]:
        head = {k: v for k, v in gr.items() if k != "points"}
        gs.append(j(head)[:-1] + ',"points":[\n' + ",\n".join(j(p) for p in gr["points"]) + "\n]}")
    out.append(",\n".join(gs) + "\n]}\n")
    return "".join(out)


def main():
    work, dest = sys.argv[1], sys.argv[2]
    rng = random.Random(35)
    ties = generate(rng, 400, 1800)
    notie = without_booking_expiry_ties(generate(rng, 400, 1))
    for name, ls, band in (("ties", ties, False), ("noties", notie, True)):
        g = golden(name, ls, work, band)
        with open(f"{dest}/{name}.json", "w") as f:
            f.write(compact(g))
        print(f"{name}: {len(ls)} listings, {sum(l['status'] == 'booked' for l in ls)} booked, "
              f"{sum(l['status'] == 'expired' for l in ls)} expired, {sum(l['status'] == 'open' for l in ls)} open, "
              f"{sum(len(l['events']) > 2 for l in ls)} reopened; {len(g['groups'])} groups", file=sys.stderr)


if __name__ == "__main__":
    main()
