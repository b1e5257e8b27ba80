#!/usr/bin/env python3
"""kill -9 one rank of a data-parallel run; the job must end, not hang.

Usage: kill_rank.py --rank R --after FILE --bound S -- MPIRUN ARGS...

Starts the mpirun command, waits until FILE exists (a checkpoint the run
writes), kills the rank R process with SIGKILL, then waits for mpirun.
Fails unless mpirun exits with a non-zero status within S seconds of the
kill (the other ranks, blocked in a collective, must not wait forever).
"""

import argparse
import os
import signal
import subprocess
import sys
import time


def rank_process(rank, root):
    """The pid of the process below `root` whose Open MPI rank is `rank`."""
    wanted = ("OMPI_COMM_WORLD_RANK=%d" % rank).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                environ = f.read().split(b"\0")
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        if wanted not in environ:
            continue
        # The process group of mpirun's session holds the job's ranks.
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == os.getpgid(root) or int(fields[4]) == os.getsid(
                root):
            return int(entry)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--bound", type=float, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    job = subprocess.Popen(command, start_new_session=True,
                           stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not os.path.exists(args.after):
        if job.poll() is not None or time.monotonic() > deadline:
            print("FAIL: the run ended or stalled before writing %s" %
                  args.after)
            os.killpg(job.pid, signal.SIGKILL)
            return 1
        time.sleep(0.05)
    victim = rank_process(args.rank, job.pid)
    if victim is None:
        print("FAIL: no process of rank %d" % args.rank)
        os.killpg(job.pid, signal.SIGKILL)
        return 1
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    try:
        status = job.wait(timeout=args.bound)
    except subprocess.TimeoutExpired:
        print("FAIL: the job still runs %g s after rank %d was killed" %
              (args.bound, args.rank))
        os.killpg(job.pid, signal.SIGKILL)
        return 1
    print("killed rank %d: mpirun exited with status %s within %g s" %
          (args.rank, "non-zero" if status != 0 else "0", args.bound))
    print("(took %.1f s)" % (time.monotonic() - killed), file=sys.stderr)
    return 0 if status != 0 else 1


if __name__ == "__main__":
    sys.exit(main())
