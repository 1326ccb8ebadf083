#!/usr/bin/env python3
"""Splits bench_relay's per-delta latency into stages, from a kernel trace of the same run.

Record (as root; the trace clock must be CLOCK_MONOTONIC, the clock of fake_claude's stamps, and the trace must
cover the whole run, because lines are matched by their byte position in each pipe):

    C='comm == "switchboard" || comm == "fake_claude" || comm == "bench_relay"'
    S='prev_comm == "switchboard" || prev_comm == "fake_claude" || prev_comm == "bench_relay" ||
       next_comm == "switchboard" || next_comm == "fake_claude" || next_comm == "bench_relay"'
    perf record -a -k CLOCK_MONOTONIC -o relay.data \\
        -e sched:sched_switch --filter "$S" -e sched:sched_wakeup --filter "$C" \\
        -e syscalls:sys_enter_read --filter "$C" -e syscalls:sys_exit_read --filter "$C" \\
        -e syscalls:sys_enter_write --filter "$C" -e syscalls:sys_exit_write --filter "$C" \\
        -- build/release/bench/bench_relay --no-floor --run 10000:31000 --dump relay.dump
    perf script -i relay.data --ns -F comm,tid,cpu,time,event,trace > relay.trace
    bench/relay_stages.py relay.dump relay.trace [--rate 10000] [--warmup 1000]

Tracing costs CPU itself (the daemon's CPU per delta rises by about a third), so the traced run is a little
slower than an untraced one; the split is what matters.

For each delta, stamped at t0 by fake_claude right before its write() and read by the bench at t4:

    CLI          t0 -> fake_claude enters the write() of the line (formatting the stamp; a preemption)
    hop 1        -> the daemon's read() that takes the line's last byte returns (the CLI's write() syscall, the
                    pipe, the daemon's wake-up, epoll_wait, the read)
    daemon       -> the daemon enters the write() that carries the event's last byte (the adapter: framing, JSON
                    parse, translator; the engine's session; bus; bridge; egress encode; event log append; stdio
                    transport and FdWriter, including any batching)
    write()      -> that write() returns (copies into the pipe, wakes the reader)
    hop 2        -> t4, the bench's read() returns

Lines are matched exactly: the fake's write of delta i is its first write() after t0; the daemon read that holds
it is the first whose running byte count reaches the end of that write; the daemon write that carries the event
is the first whose running byte count on its stdout reaches the event line's end offset (from the dump).

Inside the stages it reports how long the relay's processes were runnable but not on a CPU (woken and not yet
scheduled, or preempted), from sched_wakeup / sched_switch, and how long the daemon was on a CPU in hop 1 (busy
with earlier lines, or in epoll_wait and the read itself); for the slowest 1% it names what ran instead while they waited. Which thread is which comes from
the trace: the daemon's reactor is the "switchboard" thread with the most write() calls (its busiest read fd is
the CLI's stdout, its busiest write fd its own stdout); the client is the "bench_relay" thread with the most
read() calls; the CLI is the "fake_claude" thread with the most write() calls.
"""

import argparse
import bisect
import collections
import itertools
import re
import sys

LINE = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\S+):\s*(.*)$")


def ns(sec, frac):
    return int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


def load_trace(path):
    """Per-tid syscalls (fd paired from enter to exit), and sched events in time order."""
    syscalls = collections.defaultdict(list)  # tid -> [(kind, fd, enter_ns, exit_ns, ret)]
    comm_of = {}
    sched = []
    open_call = {}
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw)
            if not m:
                continue
            comm, tid, _cpu, sec, frac, event, rest = m.groups()
            tid = int(tid)
            t = ns(sec, frac)
            if event.startswith("syscalls:sys_enter_"):
                fd = int(re.search(r"fd: (0x[0-9a-f]+)", rest).group(1), 16)
                open_call[tid] = (event[len("syscalls:sys_enter_"):], fd, t)
                comm_of[tid] = comm
            elif event.startswith("syscalls:sys_exit_"):
                call = open_call.pop(tid, None)
                if call is None or call[0] != event[len("syscalls:sys_exit_"):]:
                    continue
                ret = int(rest.strip(), 16)
                if ret >= 1 << 63:
                    ret -= 1 << 64
                syscalls[tid].append((call[0], call[1], call[2], t, ret))
            elif event in ("sched:sched_switch", "sched:sched_wakeup"):
                sched.append((t, event, rest))
    sched.sort(key=lambda e: e[0])
    return syscalls, comm_of, sched


def busiest(syscalls, comm_of, comm, kind):
    best, count = None, -1
    for tid, calls in syscalls.items():
        if comm_of.get(tid) != comm:
            continue
        n = sum(1 for c in calls if c[0] == kind)
        if n > count:
            best, count = tid, n
    return best


def busiest_fd(calls, kind):
    return collections.Counter(c[1] for c in calls if c[0] == kind and c[4] > 0).most_common(1)[0][0]


def transfers(calls, kind, fd):
    """The successful calls of one kind on one fd: enter times, exit times, running byte counts."""
    chosen = [c for c in calls if c[0] == kind and c[1] == fd and c[4] > 0]
    return ([c[2] for c in chosen], [c[3] for c in chosen], list(itertools.accumulate(c[4] for c in chosen)))


def cpu_intervals(sched, tids, name_of):
    """Per tid: [(start, end, who ran before)] while runnable but not on a CPU, and [(start, end)] while running."""
    since = {}
    running_since = {}
    waiting = collections.defaultdict(list)
    running = collections.defaultdict(list)
    for t, event, rest in sched:
        if event == "sched:sched_wakeup":
            pid = int(re.search(r"pid=(\d+)", rest).group(1))
            if pid in tids and pid not in running_since and pid not in since:
                since[pid] = t
            continue
        prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))
        prev_comm = re.search(r"prev_comm=(.*?) prev_pid=", rest).group(1)
        state = re.search(r"prev_state=(\S+)", rest).group(1)
        nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
        if prev in tids:
            start = running_since.pop(prev, None)
            if start is not None:
                running[prev].append((start, t))
            if state.startswith("R"):  # preempted: still runnable
                since[prev] = t
        if nxt in tids:
            running_since[nxt] = t
            start = since.pop(nxt, None)
            if start is not None:
                waiting[nxt].append((start, t, name_of(prev, prev_comm)))
    return waiting, running


class Overlap:
    """Time of a sorted, disjoint interval list inside [lo, hi], optionally per label."""

    def __init__(self, intervals):
        self.intervals = intervals
        self.starts = [iv[0] for iv in intervals]

    def within(self, lo, hi, per_label=None):
        total = 0
        i = max(bisect.bisect_right(self.starts, lo) - 1, 0)
        while i < len(self.intervals) and self.intervals[i][0] < hi:
            iv = self.intervals[i]
            part = max(0, min(iv[1], hi) - max(iv[0], lo))
            total += part
            if per_label is not None and part:
                per_label[iv[2]] += part
            i += 1
        return total


def pct(values, q):
    s = sorted(values)
    return s[max(1, min(len(s), int(q * len(s) + 0.999999))) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump")
    parser.add_argument("trace")
    parser.add_argument("--rate", type=int, help="the run to analyse (default: the first in the dump)")
    parser.add_argument("--warmup", type=int, default=1000, help="leading deltas not counted (default 1000)")
    args = parser.parse_args()

    deltas = []
    with open(args.dump) as f:
        for line in f:
            rate, index, t0, t4, offset = map(int, line.split())
            if args.rate is None:
                args.rate = rate
            if rate == args.rate and index >= args.warmup:
                deltas.append((t0, t4, offset))

    syscalls, comm_of, sched = load_trace(args.trace)
    daemon = busiest(syscalls, comm_of, "switchboard", "write")
    client = busiest(syscalls, comm_of, "bench_relay", "read")
    cli = busiest(syscalls, comm_of, "fake_claude", "write")
    if None in (daemon, client, cli):
        sys.exit("relay_stages: the trace lacks the daemon, the client or the CLI (wrong filters?)")
    in_fd = busiest_fd(syscalls[daemon], "read")
    out_fd = busiest_fd(syscalls[daemon], "write")
    cli_enter, _, cli_bytes = transfers(syscalls[cli], "write", 1)
    _, read_exit, read_bytes = transfers(syscalls[daemon], "read", in_fd)
    write_enter, write_exit, write_bytes = transfers(syscalls[daemon], "write", out_fd)

    roles = {daemon: "the daemon's reactor", client: "the client (bench reader)", cli: "the CLI (fake_claude)"}

    def name_of(pid, comm):
        if pid in roles:
            return roles[pid]
        if comm == "switchboard":
            return "another daemon thread (event log writer)"
        return "other processes" if pid != 0 else "idle"

    waiting, running = cpu_intervals(sched, {daemon, client, cli}, name_of)
    waits = {tid: Overlap(waiting[tid]) for tid in (daemon, client, cli)}
    daemon_running = Overlap([(a, b, "") for a, b in running[daemon]])

    rows = []
    tail_whom = []
    skipped = 0
    for t0, t4, offset in deltas:
        k = bisect.bisect_left(cli_enter, t0)
        if k == len(cli_enter):
            skipped += 1
            continue
        tw = cli_enter[k]
        j = bisect.bisect_left(read_bytes, cli_bytes[k])
        m = bisect.bisect_left(write_bytes, offset)
        if j == len(read_bytes) or m == len(write_bytes):
            skipped += 1
            continue
        t1, t2, t3 = read_exit[j], write_enter[m], write_exit[m]
        if not t0 <= tw <= t1 <= t2 <= t3 <= t4:
            skipped += 1
            continue
        whom = collections.Counter()
        rows.append({
            "end to end": t4 - t0,
            "CLI: stamp -> write() entered": tw - t0,
            "hop 1: CLI write() entered -> daemon read() returns": t1 - tw,
            "  the daemon waiting for a CPU": waits[daemon].within(tw, t1, whom),
            "  the daemon on a CPU (earlier lines, epoll, the read)": daemon_running.within(tw, t1),
            "daemon: read() returned -> write() entered": t2 - t1,
            "  the daemon waiting for a CPU (preempted)": waits[daemon].within(t1, t2, whom),
            "daemon: write() syscall": t3 - t2,
            "hop 2: write() returned -> client read() returns": t4 - t3,
            "  the client waiting for a CPU": waits[client].within(t3, t4, whom),
        })
        waits[cli].within(t0, tw, whom)
        tail_whom.append(whom)
    if not rows:
        sys.exit("relay_stages: no delta could be matched with the trace")

    print(f"run {args.rate}/s: {len(rows)} deltas matched, {skipped} not; daemon reactor tid {daemon} (reads the CLI "
          f"on fd {in_fd}, writes its stdout on fd {out_fd}), client tid {client}, CLI tid {cli}")
    cut = pct([r["end to end"] for r in rows], 0.99)
    tail = [i for i, r in enumerate(rows) if r["end to end"] >= cut]
    print(f"{'stage (us)':54} {'median':>7} {'p90':>7} {'p99':>8} {'p99.9':>8} {'max':>8} {'mean':>7}  {'slowest 1%: mean':>16}")
    for key in rows[0]:
        values = [r[key] for r in rows]
        print(f"{key:54} {pct(values, .5)/1e3:7.1f} {pct(values, .9)/1e3:7.1f} {pct(values, .99)/1e3:8.1f} "
              f"{pct(values, .999)/1e3:8.1f} {max(values)/1e3:8.1f} {sum(values)/len(values)/1e3:7.1f}  "
              f"{sum(rows[i][key] for i in tail)/len(tail)/1e3:16.1f}")
    total = sum(rows[i]["end to end"] for i in tail)
    whom = collections.Counter()
    for i in tail:
        whom.update(tail_whom[i])
    waited = sum(whom.values())
    print(f"slowest 1% (end to end >= {cut/1e3:.1f} us, {len(tail)} deltas): {100*waited/total:.0f}% of their time a "
          f"process of the relay was waiting for a CPU; the CPU went meanwhile to: " +
          ", ".join(f"{name} {100*t/waited:.0f}%" for name, t in whom.most_common()) if waited else "")


if __name__ == "__main__":
    main()
