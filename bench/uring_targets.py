"""The table bench/uring.sh ends with: each tracing target against what
the runs measured, as the median AND the worst run (the machines are shared
and noisy, so a median alone can hide a run that missed), and whether it
was met. Pure: it takes the runs bench/uring.sh collected and returns
markdown lines, so a filtered run (VARIANTS=, WORKLOADS=) or a run that lost
records or failed still gets a table, with what was not measured said.

"Worst run" is moontrace's worst run against the medians of the others
(untraced, floors, perf): the slowest `moontrace uring` run for a cost, the
largest loss, RSS and size, the slowest round of fxt_sink_bench."""
import statistics

FLOOR_TIMES = 2  # per-request cost at most 2x the classic-tracepoint floor
LOSSLESS_EVENTS_PER_S = 3 * 3.3e6  # 3x the 3.3 M events/s written losslessly at the baseline
RSS_MB = 100
BYTES_PLAIN, BYTES_GZ = 160, 40
SINK_RECORDS_PER_S = 10e6


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def good(runs):
    """Runs that measured something: the workload ran and the tracer did
    not fail (a run that lost records is still good)."""
    return [r for r in runs or [] if not r.get("failed") and r.get("rate")]


def verdict(median_ok, worst_ok=None):
    if median_ok is None:
        return "not measured"
    if not median_ok:
        return "**missed**"
    if worst_ok is False:
        return "met by the median, **missed** by the worst run"
    return "**met**"


class Targets:
    def __init__(self, samples, labels, moontrace_variants, hits=None, sink=None,
                 sweep_best=None, long_label="NOP storm at full speed for 30 s"):
        """samples[workload][variant]: the runs' dicts (rate, requests, seconds,
        events, lost, bytes, rss_mb, failed); labels[workload]: its heading;
        hits[workload]: tracepoint hits per request untraced; sink: dict with
        ns (ns per record of each round) or error; sweep_best: the zero-loss
        search's best step (events, seconds, rate) or None."""
        self.s, self.labels, self.mt_variants = samples, labels, moontrace_variants
        self.hits, self.sink, self.sweep_best = hits or {}, sink, sweep_best
        self.long_label = long_label

    def runs(self, w, v):
        return good(self.s.get(w, {}).get(v))

    def added(self, w, v, rate):
        """ns a request costs more than untraced (median untraced)."""
        base = med([r["rate"] for r in self.runs(w, "untraced")])
        return None if base is None or not rate else 1e9 / rate - 1e9 / base

    def cost(self, w, v):
        """(median ns added, worst run's ns added) of variant v on w."""
        rates = [r["rate"] for r in self.runs(w, v)]
        if not rates:
            return None, None
        return self.added(w, v, med(rates)), self.added(w, v, min(rates))

    def unmeasured(self, target, *needs):
        """The row of a target some of whose runs (workload, variant) are
        missing: left out by a filter (not measured), or all failed (missed)."""
        for w, v in needs:
            runs = self.s.get(w, {}).get(v)
            if runs and not good(runs):
                why = next((r["failed"] for r in runs if r.get("failed")), "no rate")
                return [target, f"every run of {w} {v} failed: {why[:100]}", "n/a", "**missed**"]
        return [target, "n/a", "n/a", verdict(None)]

    def slowest(self, w):
        """Which run the worst is: the slowest of how many (and how many failed)."""
        all_, ok = self.s.get(w, {}).get("mt", []), self.runs(w, "mt")
        failed = len(all_) - len(ok)
        return f"the slowest of {len(ok)}" + (f"; {failed} failed" if failed else "")

    # --- the rows
    def floor_row(self, w):
        mt, mt_worst = self.cost(w, "mt")
        floor, _ = self.cost(w, "mt_floor")
        btf, _ = self.cost(w, "mt_floor_btf")
        target = (f"{self.labels[w]}: ns added per request ≤ {FLOOR_TIMES}× the floor "
                  "(empty classic-tracepoint programs)")
        if mt is None or not floor or floor <= 0:
            return self.unmeasured(target, (w, "mt"), (w, "mt_floor"), (w, "untraced"))
        x, xw = mt / floor, mt_worst / floor
        fig = f"{x:.2f}× ({mt:,.0f} ns; floor {floor:,.0f} ns)"
        if btf and btf > 0:
            fig += f"; against the tp_btf floor ({btf:,.0f} ns): {mt / btf:.2f}×"
        worst = f"{xw:.2f}× ({mt_worst:,.0f} ns, {self.slowest(w)})"
        return [target, fig, worst, verdict(x <= FLOOR_TIMES, xw <= FLOOR_TIMES)]

    def perf_row(self, w):
        mt, mt_worst = self.cost(w, "mt")
        perf, _ = self.cost(w, "perf")
        target = f"{self.labels[w]}: ns added per request less than `perf record`'s"
        if mt is None or perf is None:
            return self.unmeasured(target, (w, "mt"), (w, "perf"), (w, "untraced"))
        fig = f"{mt:,.0f} against {perf:,.0f} ns ({mt / perf:.2f}×)" if perf > 0 else \
            f"{mt:,.0f} against {perf:,.0f} ns"
        worst = f"{mt_worst:,.0f} against {perf:,.0f} ns" + \
            (f" ({mt_worst / perf:.2f}×)" if perf > 0 else "") + f", {self.slowest(w)}"
        return [target, fig, worst, verdict(mt < perf, mt_worst < perf)]

    def loss_row(self, w, what):
        runs = self.runs(w, "mt")
        target = f"zero lost records at full sampling, {what}"
        if not runs:
            return self.unmeasured(target, (w, "mt"))
        lost = [r.get("lost") for r in runs]
        known = [x for x in lost if x is not None]
        unknown = len(lost) - len(known)
        if not known:
            return [target, "no summary line", f"{unknown} of {len(runs)} runs gave none",
                    "**missed**"]
        worst_run = max((r for r in runs if r.get("lost") is not None), key=lambda r: r["lost"])
        share = ""
        if worst_run["lost"] and worst_run.get("events") is not None:
            share = f" ({100 * worst_run['lost'] / (worst_run['lost'] + worst_run['events']):.1f}%)"
        worst = f"{worst_run['lost']:,} lost{share}, the worst of {len(runs)}"
        if unknown:
            worst += f"; {unknown} run(s) gave no summary line"
        fig = f"{med(known):,.0f} lost"
        return [target, fig, worst, verdict(med(known) == 0, max(known) == 0 and not unknown)]

    def lossless_row(self):
        target = (f"lossless rate ≥ {LOSSLESS_EVENTS_PER_S / 1e6:.1f} M events/s written "
                  "(3× the baseline's 3.3 M), or what rate is lossless")
        runs = self.runs("nop", "mt")
        hits = sum(self.hits.get("nop", {}).values()) or None

        def also(rate):  # the same rate as tracepoint hits, which the record layout cannot change
            return f"; {rate * hits / 1e6:.2f} M tracepoint hits/s" if hits else ""

        if runs and all(r.get("lost") == 0 and r.get("events") is not None for r in runs):
            per_s = [r["events"] / r["seconds"] for r in runs]
            reqs = [r["rate"] for r in runs]
            fig = (f"{med(per_s) / 1e6:.2f} M events/s, the NOP storm at full speed without "
                   f"loss ({med(reqs) / 1e6:.2f} M requests/s{also(med(reqs))})")
            worst = f"{min(per_s) / 1e6:.2f} M events/s ({min(reqs) / 1e6:.2f} M requests/s)"
            long_lost = [r["lost"] for r in self.runs("storm30", "mt") if r.get("lost")]
            if long_lost:  # a short storm may end before the tracer falls behind
                fig += f"; but the {self.long_label} lost up to {max(long_lost):,} records"
            return [target, fig, worst, verdict(
                med(per_s) >= LOSSLESS_EVENTS_PER_S and not long_lost,
                min(per_s) >= LOSSLESS_EVENTS_PER_S and not long_lost)]
        b = self.sweep_best
        if b:
            per_s = b["events"] / b["seconds"]
            fig = (f"{per_s / 1e6:.2f} M events/s: the highest lossless rate found by capping the "
                   f"storm's CPU ({b['rate'] / 1e6:.2f} M requests/s{also(b['rate'])}); at full "
                   "speed the storm lost records")
            return [target, fig, "one run per step", verdict(per_s >= LOSSLESS_EVENTS_PER_S)]
        if runs:
            return [target, "the storm lost records at full speed, and no lossless rate was "
                    "searched (SWEEP=0) or found", "n/a", "**missed**"]
        return self.unmeasured(target, ("nop", "mt"))

    def rss_row(self, w):
        target = f"tracer peak RSS < {RSS_MB} MB, {self.labels[w]}"
        mt = [r.get("rss_mb") for r in self.runs(w, "mt")]
        every = [(r["rss_mb"], label) for v, label in self.mt_variants.items()
                 for r in self.runs(w, v) if r.get("rss_mb") is not None]
        if med(mt) is None:
            return self.unmeasured(target, (w, "mt"))
        peak, which = max(every)
        worst = f"{peak:.1f} MB ({which}; the highest of {len(every)} moontrace runs)"
        return [target, f"{med(mt):.1f} MB (`moontrace uring`)", worst,
                verdict(med(mt) < RSS_MB, peak < RSS_MB)]

    def bytes_row(self, v, limit, what):
        target = f"bytes per fio request ≤ {limit}, {what}"
        runs = self.runs("fio", v)
        whole = [r["bytes"] / r["requests"] for r in runs
                 if r.get("lost") == 0 and r.get("bytes") and r.get("requests")]
        if not whole:
            if runs:  # a lossy trace's bytes per request would flatter it
                return [target, "not judged: every run lost records", "n/a", "not measured"]
            return self.unmeasured(target, ("fio", v))
        left = len(runs) - len(whole)
        worst = f"{max(whole):,.0f}" + (f" ({left} run(s) that lost records left out)" if left
                                        else "")
        return [target, f"{med(whole):,.0f}", worst, verdict(med(whole) <= limit,
                                                           max(whole) <= limit)]

    def sink_row(self):
        target = f"fxt_sink_bench ≥ {SINK_RECORDS_PER_S / 1e6:.0f} M records/s (one core)"
        s = self.sink
        if not s or not s.get("ns"):
            return [target, (s or {}).get("error", "not run"), "n/a", verdict(None)]
        ns = s["ns"]
        fig, worst = 1e9 / med(ns), 1e9 / max(ns)
        return [target, f"{fig / 1e6:.2f} M records/s ({med(ns):.1f} ns per record)",
                f"{worst / 1e6:.2f} M records/s ({max(ns):.1f} ns; the slowest of "
                f"{len(ns)} rounds)", verdict(fig >= SINK_RECORDS_PER_S,
                                             worst >= SINK_RECORDS_PER_S)]

    def lines(self):
        rows = [self.floor_row("fio"), self.floor_row("nop"), self.perf_row("fio"),
                self.perf_row("nop"),
                self.loss_row("nop", self.labels["nop"]),
                self.loss_row("fio", self.labels["fio"])]
        if "storm30" in self.s:
            rows.append(self.loss_row("storm30", self.long_label))
        rows.append(self.lossless_row())
        rows += [self.rss_row(w) for w in ("fio", "nop", "storm30") if w in self.s]
        rows += [self.bytes_row("mt", BYTES_PLAIN, "plain trace"),
                 self.bytes_row("mt_gz", BYTES_GZ, "gzipped (`-o ….fxt.gz`)"), self.sink_row()]
        out = ["| target | figure: median | worst run | |", "|---|---|---|---|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return out
